import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadConfig } from '../../config/config.ts';
import { effectiveSettings, isSecretParam, MASK, maskUrl } from '../../config/effective-settings.ts';

test(
  'a setting left at its default reads as default although its value is shown in base units (regression: every ' +
    'duration was marked changed)',
  () => {
    const rows = effectiveSettings(
      loadConfig({ PORT: '18071', TIDINGS_API_TOKEN: 'tidings_settings_test_token_0123456789abcdef' }),
    ).data;
    const byEnv = new Map(rows.map((r) => [r.env, r]));
    assert.equal(
      byEnv.get('TIDINGS_LEASE')?.isDefault,
      true,
      `TIDINGS_LEASE ${byEnv.get('TIDINGS_LEASE')?.value} vs ${byEnv.get('TIDINGS_LEASE')?.defaultValue}`,
    );
    assert.equal(byEnv.get('TIDINGS_RETRY_SCHEDULE')?.isDefault, true);
    assert.equal(byEnv.get('PORT')?.isDefault, false, 'a value set in the environment is not the default');
    const changed = rows.filter((r) => !r.isDefault && !r.secret).map((r) => r.env);
    assert.deepEqual(changed, ['PORT']);
  },
);

test(
  'secrets in URL settings are masked: the userinfo password and query parameters such as password, sslpassword, ' +
    'token, key (regression: `?password=` was shown)',
  () => {
    const rows = effectiveSettings(
      loadConfig({
        TIDINGS_API_TOKEN: 'tidings_settings_test_token_0123456789abcdef',
        DATABASE_URL:
          'postgresql://tidings:s3cret-userinfo@db.internal:5432/tidings?sslmode=verify-full&password=s3cret-query' +
          '&sslpassword=s3cret-ssl&application_name=api',
        OTEL_EXPORTER_OTLP_ENDPOINT: 'https://otel.example.com/v1?api_key=s3cret-key&Token=s3cret-token&region=eu',
      }),
    ).data;
    const byEnv = new Map(rows.map((r) => [r.env, r.value]));
    assert.equal(
      byEnv.get('DATABASE_URL'),
      `postgresql://tidings:${MASK}@db.internal:5432/tidings?sslmode=verify-full&password=${MASK}` +
        `&sslpassword=${MASK}&application_name=api`,
    );
    assert.equal(
      byEnv.get('OTEL_EXPORTER_OTLP_ENDPOINT'),
      `https://otel.example.com/v1?api_key=${MASK}&Token=${MASK}&region=eu`,
    );
    assert.ok(!JSON.stringify(rows).includes('s3cret'), 'no secret anywhere in the settings');
  },
);

test('a URL that does not parse is masked whole; a parameter name is matched in any case and percent-encoding', () => {
  assert.equal(maskUrl('postgresql://u:p@[bad'), MASK);
  assert.equal(
    maskUrl('postgresql://h/db?PassWord=x&%70assword=y&user=u'),
    `postgresql://h/db?PassWord=${MASK}&%70assword=${MASK}&user=u`,
  );
  assert.equal(isSecretParam('sslmode'), false);
});
