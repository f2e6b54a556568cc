import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadConfig } from '../../config/config.ts';
import { effectiveSettings } from './settings.ts';

test('a setting left at its default reads as default although its value is shown in base units (regression: every duration was marked changed)', () => {
  const rows = effectiveSettings(loadConfig({ PORT: '18071', TIDINGS_API_TOKEN: 'tidings_settings_test_token_0123456789abcdef' })).data;
  const byEnv = new Map(rows.map((r) => [r.env, r]));
  assert.equal(byEnv.get('TIDINGS_LEASE')?.isDefault, true, `TIDINGS_LEASE ${byEnv.get('TIDINGS_LEASE')?.value} vs ${byEnv.get('TIDINGS_LEASE')?.defaultValue}`);
  assert.equal(byEnv.get('TIDINGS_RETRY_SCHEDULE')?.isDefault, true);
  assert.equal(byEnv.get('PORT')?.isDefault, false, 'a value set in the environment is not the default');
  const changed = rows.filter((r) => !r.isDefault && !r.secret).map((r) => r.env);
  assert.deepEqual(changed, ['PORT']);
});
