/**
 * End to end on the embedded engine (PGlite in a data folder, the default of `npm start`): the API and the
 * dispatcher in one process deliver to a real receiver; a restart on the same folder keeps messages,
 * endpoints, the encryption key and the admin token (which is printed only on the first start).
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Svix } from 'svix';
import { encodeSecret } from '../../src/domain/signing.ts';
import { startTidings, type Running } from '../../src/main/compose.ts';
import { LogTap } from '../support/log-tap.ts';
import { startTestReceiver, type TestReceiver } from '../support/test-receiver.ts';

describe('embedded engine end to end', () => {
  let dataDir: string;
  let receiver: TestReceiver;
  const env = (): Record<string, string> => ({
    TIDINGS_DATA_DIR: dataDir,
    HOST: '127.0.0.1',
    PORT: '0',
    TIDINGS_EGRESS_ALLOWLIST: '127.0.0.1/32',
    TIDINGS_LOG_LEVEL: 'info',
    TIDINGS_POLL_INTERVAL: '100ms',
  });

  before(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'tidings-embedded-'));
    receiver = await startTestReceiver();
  });
  after(async () => {
    await receiver?.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  test(
    'first start generates a token and a key; messages are delivered; a restart keeps everything and prints no ' +
      'new token',
    async () => {
      const logs = new LogTap();
      let tidings: Running = await startTidings({
        roles: { api: true, dispatcher: true },
        env: env(),
        logDestination: logs,
      });
      const token = tidings.generatedAdminToken;
      assert.ok(token !== null && token.length >= 32, 'a token is generated on first start');
      const keyFile = join(dataDir, 'encryption-keys');
      assert.equal(((await stat(keyFile)).mode & 0o777).toString(8), '600');
      const svix = new Svix(token, { serverUrl: tidings.apiUrl! });
      const app = await svix.application.create({ name: 'local', uid: 'local' });
      const secret = encodeSecret(randomBytes(32));
      await receiver.setSecret('/local', secret);
      await svix.endpoint.create(app.id, { url: receiver.url('/local'), secret });
      const ids = [];
      for (let i = 0; i < 20; i++)
        ids.push(
          (
            await svix.message.create(app.id, {
              eventType: 'local.test',
              payload: { i, marker: 'EMBEDDED-PLAINTEXT-MARKER' },
            })
          ).id,
        );
      const seen = await receiver.waitForCount(20, 60_000, (r) => r.path === '/local');
      assert.deepEqual(new Set(seen.map((r) => r.webhookId)), new Set(ids));
      assert.ok(seen.every((r) => r.signatureValid === true));
      await logs.waitForCount((l) => l.event === 'delivery.attempted', 20, 30_000);
      await tidings.stop();

      const key = await readFile(keyFile, 'utf8');
      tidings = await startTidings({
        roles: { api: true, dispatcher: true },
        env: env(),
        logDestination: new LogTap(),
      });
      try {
        assert.equal(tidings.generatedAdminToken, null, 'the token is printed only once');
        const again = new Svix(token, { serverUrl: tidings.apiUrl! });
        const listed = await again.message.list('local', { limit: 50 });
        assert.equal(listed.data.length, 20, 'messages survive a restart');
        assert.equal(await readFile(keyFile, 'utf8'), key, 'the key is kept');
        const msg = await again.message.create('local', { eventType: 'local.test', payload: { after: 'restart' } });
        await receiver.waitForCount(1, 30_000, (r) => r.webhookId === msg.id);
      } finally {
        await tidings.stop();
      }
    },
  );
});
