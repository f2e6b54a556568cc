/**
 * `tidings keys rotate` under live delivery (docs/guides/security.md), on the PostgreSQL server. Messages are published
 * under key k1 while one receiver path fails, so deliveries are still being retried when Tidings restarts
 * with k2 in front of the ring; then `keys rotate` (small batches) runs while a publisher keeps publishing
 * and the dispatcher keeps delivering. Nothing is lost (every message reaches every endpoint with a valid
 * signature and its exact payload), no value is left under k1, k1 is retired, and Tidings then starts and
 * reads everything with k2 alone.
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { Svix } from 'svix';
import { loadConfig } from '../../src/config/config.ts';
import { encodeSecret } from '../../src/domain/signing.ts';
import { startTidings, type Running } from '../../src/main/compose.ts';
import { runKeysRotate } from '../../src/main/keys-rotate.ts';
import { LogTap } from '../support/log-tap.ts';
import { silentLogger } from '../support/logger.ts';
import { freshServerDatabase, type TestDatabase } from '../support/db.ts';
import { startTestReceiver, type TestReceiver } from '../support/test-receiver.ts';

const TOKEN = 'rotation_live_admin_token_0123456789';
const K1 = `k1:${randomBytes(32).toString('base64')}`;
const K2 = `k2:${randomBytes(32).toString('base64')}`;
const PATHS = ['/live/a', '/live/b', '/live/c'];
const BEFORE = 40;
const DURING = 40;

describe('keys rotate while Tidings delivers', () => {
  let database: TestDatabase;
  let receiver: TestReceiver;
  let tidings: Running | undefined;
  const logs = new LogTap();
  const env = (keys: string) => ({
    DATABASE_URL: database.url!,
    TIDINGS_ENCRYPTION_KEYS: keys,
    TIDINGS_API_TOKEN: TOKEN,
    HOST: '127.0.0.1',
    PORT: '0',
    TIDINGS_EGRESS_ALLOWLIST: '127.0.0.1/32',
    TIDINGS_RETRY_SCHEDULE: '20ms,40ms,80ms,150ms,300ms,300ms,300ms,300ms,300ms,300ms',
    TIDINGS_RETRY_JITTER: '0',
    TIDINGS_POLL_INTERVAL: '30ms',
    TIDINGS_LOG_LEVEL: 'info',
    TIDINGS_KEY_ROTATION_BATCH: '7',
    // The failing path opens its endpoint's breaker; keep its cool-down short so the test does not wait on it.
    TIDINGS_BREAKER_COOLDOWN: '100ms',
    TIDINGS_BREAKER_MAX_COOLDOWN: '200ms',
  });
  const start = async (keys: string): Promise<Svix> => {
    tidings = await startTidings({ roles: { api: true, dispatcher: true }, env: env(keys), logDestination: logs });
    return new Svix(TOKEN, { serverUrl: tidings.apiUrl! });
  };

  before(async () => {
    database = await freshServerDatabase();
    receiver = await startTestReceiver();
  });
  after(async () => {
    await tidings?.stop();
    await receiver?.stop();
    await database?.drop();
  });

  test(
    'nothing is lost, every signature verifies, every payload is ' + 'exact, and no value is left under the old key',
    async (t) => {
      let svix = await start(K1);
      const app = await svix.application.create({ name: 'rotation live' });
      for (const path of PATHS) {
        const secret = encodeSecret(randomBytes(32));
        await receiver.setSecret(path, secret);
        await svix.endpoint.create(app.id, { url: receiver.url(path), secret });
      }
      // One path fails its first 30 requests: its deliveries are still retrying across the restart and the rotation.
      await receiver.script(
        '/live/b',
        Array.from({ length: 30 }, () => ({ status: 503 })),
        { status: 200 },
      );
      const published = new Map<string, string>();
      const publish = async (n: number, svixClient: Svix): Promise<void> => {
        const payload = { n, pad: randomBytes(8).toString('hex') };
        const msg = await svixClient.message.create(app.id, { eventType: 'rotation.live', payload });
        // The client sends JSON.stringify(payload); Tidings delivers that exact byte span.
        published.set(msg.id, createHash('sha256').update(JSON.stringify(payload)).digest('hex'));
      };
      for (let n = 0; n < BEFORE; n++) await publish(n, svix);
      await receiver.waitForCount(BEFORE * 2, 60_000, (r) => r.path !== '/live/b' && r.answer.status === 200);
      await receiver.waitForCount(5, 60_000, (r) => r.path === '/live/b');
      await tidings!.stop();

      svix = await start(`${K2},${K1}`);
      const underK1Before = (
        await database.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM messages WHERE payload_key_id = 'k1'`)
      ).rows[0]!.n;
      assert.equal(underK1Before, BEFORE);
      const publisher = (async () => {
        for (let n = BEFORE; n < BEFORE + DURING; n++) await publish(n, svix);
      })();
      const progress: string[] = [];
      const rotationStartedAt = Date.now();
      const rotation = await runKeysRotate({
        config: loadConfig(env(`${K2},${K1}`)),
        logger: silentLogger,
        out: (line) => progress.push(line),
      });
      const rotationEndedAt = Date.now();
      await publisher;
      assert.equal(rotation.exitCode, 0, progress.join('\n'));
      assert.ok(
        progress.filter((l) => l.includes('messages.payload') && l.includes('batch of')).length >=
          Math.ceil(BEFORE / 7),
        'progress is reported batch by batch',
      );
      assert.deepEqual(rotation.report.retired, ['k1']);

      const ids = new Set(published.keys());
      const done = await receiver.waitFor(
        (requests) =>
          PATHS.every((path) => {
            const ok = new Set(
              requests.filter((r) => r.path === path && r.answer.status === 200).map((r) => r.webhookId),
            );
            return [...ids].every((id) => ok.has(id));
          }),
        120_000,
        'every message delivered to every endpoint',
      );
      const delivered = done.filter((r) => r.answer.status === 200);
      t.diagnostic(
        `${done.filter((r) => r.receivedAtMs >= rotationStartedAt && r.receivedAtMs <= rotationEndedAt).length} ` +
          `requests reached the receiver while keys rotate ran (${rotationEndedAt - rotationStartedAt} ms)`,
      );
      assert.ok(
        delivered.every((r) => r.signatureValid === true),
        'every delivered request verifies',
      );
      for (const r of delivered)
        assert.equal(r.bodySha256, published.get(r.webhookId!), `payload of ${r.webhookId} is not the bytes published`);
      const leftOnK1 = (
        await database.db.query<{ n: number }>(
          `SELECT ((SELECT count(*) FROM messages WHERE payload_key_id = 'k1') + (SELECT count(*) FROM endpoints ` +
            `WHERE secret_key_id = 'k1' OR previous_secret_key_id = 'k1' OR sensitive_headers_key = 'k1'))::int AS ` +
            'n',
        )
      ).rows[0]!.n;
      assert.equal(leftOnK1, 0, 'no value is left under k1');
      // Wait until every outcome is recorded (the receiver may answer before the dispatcher writes).
      await logs.waitForCount(
        (l) => l.event === 'delivery.attempted' && l.next === 'succeeded',
        (BEFORE + DURING) * PATHS.length,
        60_000,
        'recorded successes',
      );
      const states = (
        await database.db.query<{ state: string; n: number }>(
          `SELECT state, count(*)::int AS n FROM deliveries GROUP BY 1`,
        )
      ).rows;
      assert.deepEqual(states, [{ state: 'succeeded', n: (BEFORE + DURING) * PATHS.length }]);

      // k1 is retired: Tidings starts with k2 alone and reads every payload.
      await tidings!.stop();
      svix = await start(K2);
      const page = await svix.message.list(app.id, { limit: 250, withContent: true });
      assert.equal(page.data.length, BEFORE + DURING);
      assert.ok(page.data.every((m) => typeof (m.payload as { n?: unknown }).n === 'number'));
    },
  );
});
