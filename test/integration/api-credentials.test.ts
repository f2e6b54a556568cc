import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Svix } from 'svix';
import { BOOTSTRAP_ADMIN_KEY_ID, createAuthenticator, ensureAdminToken, hashToken } from '../../src/app/credentials.ts';
import type { Clock } from '../../src/ports/clock.ts';
import { ENGINES } from '../support/db.ts';
import { ADMIN_TOKEN, startApi, type ApiHarness } from './api-harness.ts';

const clock: Clock = { nowMs: () => Date.now(), sqlNow: () => null };

for (const engine of ENGINES) {
  describe(`credentials (${engine.name})`, () => {
    let api: ApiHarness;
    before(async () => {
      api = await startApi(engine.fresh);
    });
    after(async () => api?.close());

    test(
      'with no configured token, the first start generates one, stores only its hash, and later starts generate ' +
        'none',
      async () => {
        assert.equal(
          await ensureAdminToken({ store: api.keys, clock, configuredToken: ADMIN_TOKEN }),
          null,
          'a configured token needs nothing',
        );
        const results = await Promise.all(
          [1, 2, 3].map(() => ensureAdminToken({ store: api.keys, clock, configuredToken: undefined })),
        );
        const tokens = results.filter((t): t is string => t !== null);
        assert.equal(tokens.length, 1, 'one of three racing starts wins');
        const token = tokens[0]!;
        assert.match(token, /^tidings_[A-Za-z0-9_-]{43}$/);
        assert.equal(await ensureAdminToken({ store: api.keys, clock, configuredToken: undefined }), null);

        const row = await api.database.db.query<{ token_hash: Buffer; role: string }>(
          'SELECT token_hash, role FROM api_keys WHERE id = $1',
          [BOOTSTRAP_ADMIN_KEY_ID],
        );
        assert.deepEqual(row.rows[0]!.token_hash, hashToken(token));
        assert.equal(row.rows[0]!.role, 'admin');
        const prefix = await api.database.db.query<{ token_prefix: string }>(
          'SELECT token_prefix FROM api_keys WHERE id = $1',
          [BOOTSTRAP_ADMIN_KEY_ID],
        );
        assert.equal(
          prefix.rows[0]!.token_prefix,
          token.slice(0, 12),
          'only a 12-character prefix is kept to recognise the key',
        );

        // The generated token works against the API (through a server whose own configured token differs).
        const client = new Svix(token, { serverUrl: api.url });
        await client.application.list();
        const authenticate = createAuthenticator({ store: api.keys, adminToken: undefined });
        assert.deepEqual(await authenticate(hashToken(token)), { kind: 'admin' });
        assert.equal(await authenticate(hashToken(token + 'x')), null);
        assert.equal(await authenticate(Buffer.alloc(0)), null, 'not a SHA-256 digest');
      },
    );

    test('deleting an application revokes its scoped keys', async () => {
      const app = await api.svix.application.create({ name: 'short-lived' });
      const token = await api.appKey(app.id);
      assert.equal((await api.request('GET', `/api/v1/app/${app.id}`, { token })).status, 200);
      await api.svix.application.delete(app.id);
      assert.equal((await api.request('GET', `/api/v1/app/${app.id}`, { token })).status, 401);
    });
  });
}
