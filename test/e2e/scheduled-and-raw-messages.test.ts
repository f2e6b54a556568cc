/**
 * Raw and scheduled messages end to end, through the official svix client: Tidings (API and dispatcher) on
 * the PostgreSQL server in real time, and on the embedded engine with a manual clock (the API from
 * startTidings, the dispatcher stepped by the test). A receiver process on 127.0.0.1 records every request;
 * the test verifies each one with the public `svix` and `standardwebhooks` verifiers.
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { messageInRaw, Svix, Webhook as SvixWebhook } from 'svix';
import { createHttpSender } from '../../src/adapters/http-sender/http-sender.ts';
import { createPgDeliveryStore } from '../../src/adapters/postgres/delivery/delivery-store.ts';
import { cryptoRandom } from '../../src/adapters/system/system-clock.ts';
import { createDispatcher, type Dispatcher } from '../../src/app/dispatcher/dispatcher.ts';
import { encodeSecret } from '../../src/domain/signing.ts';
import { DEFAULT_RETRY_POLICY } from '../../src/domain/retry-schedule.ts';
import { startTidings, type Running } from '../../src/main/compose.ts';
import type { Sender } from '../../src/ports/sender.ts';
import { TEST_ENCRYPTION_KEYS, testCipher } from '../support/cipher.ts';
import { freshServerDatabase, type TestDatabase } from '../support/db.ts';
import { silentLogger } from '../support/logger.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { startTestReceiver, type ReceivedRequest, type TestReceiver } from '../support/test-receiver.ts';

const TOKEN = `e2e_${randomBytes(16).toString('hex')}`;
const HOUR_MS = 3_600_000;
const RAW_BODY = 'plain text body: not JSON, {unbalanced, "quotes", ümlauts ☕\n';

const sha256 = (text: string): string => createHash('sha256').update(Buffer.from(text, 'utf8')).digest('hex');

/** Only the `prefix`-* signature headers of a request, renamed to `webhook-*` when asked. */
function signatureSet(
  request: ReceivedRequest,
  prefix: 'webhook' | 'svix',
  as: 'webhook' | 'svix' = prefix,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of ['id', 'timestamp', 'signature']) {
    const value = request.headers[`${prefix}-${name}`];
    if (value !== undefined) out[`${as}-${name}`] = value;
  }
  return out;
}

/**
 * Verifies `request` with both public verifiers under both header sets; throws when one refuses.
 */
function verifyBothWays(secret: string, request: ReceivedRequest): void {
  const body = Buffer.from(request.body, 'utf8');
  assert.equal(request.headers['svix-id'], request.headers['webhook-id'], 'both sets carry the same values');
  new SvixWebhook(secret).verify(body, signatureSet(request, 'svix'));
  new SvixWebhook(secret).verify(body, signatureSet(request, 'webhook'));
  new StandardWebhook(secret).verify(body, signatureSet(request, 'webhook'), { jsonParse: false });
  new StandardWebhook(secret).verify(body, signatureSet(request, 'svix', 'webhook'), { jsonParse: false });
}

describe('raw and scheduled messages on the PostgreSQL server (real time)', () => {
  let database: TestDatabase;
  let receiver: TestReceiver;
  let tidings: Running;
  let env: Record<string, string>;
  const start = async (): Promise<Running> => startTidings({ roles: { api: true, dispatcher: true }, env });

  before(async () => {
    database = await freshServerDatabase();
    receiver = await startTestReceiver();
    env = {
      DATABASE_URL: database.url!,
      TIDINGS_ENCRYPTION_KEYS: TEST_ENCRYPTION_KEYS,
      TIDINGS_API_TOKEN: TOKEN,
      HOST: '127.0.0.1',
      PORT: '0',
      TIDINGS_EGRESS_ALLOWLIST: '127.0.0.1/32',
      TIDINGS_POLL_INTERVAL: '50ms',
      TIDINGS_LOG_LEVEL: 'silent',
    };
    tidings = await start();
  });
  after(async () => {
    await tidings?.stop();
    await receiver?.stop();
    await database?.drop();
  });

  const endpoint = async (svix: Svix, appId: string, path: string): Promise<string> => {
    const secret = encodeSecret(randomBytes(32));
    await receiver.setSecret(path, secret);
    await svix.endpoint.create(appId, { url: receiver.url(path), secret });
    return secret;
  };

  test(
    'a raw message (messageInRaw) reaches the receiver byte for byte with its content type, signed over those ' +
      'bytes under webhook-* and svix-* (svix and standardwebhooks verify both); a JSON payload is unchanged',
    async () => {
      const svix = new Svix(TOKEN, { serverUrl: tidings.apiUrl! });
      const app = await svix.application.create({ name: 'raw' });
      const secret = await endpoint(svix, app.id, '/raw');
      const plain = await svix.message.create(app.id, messageInRaw('note.raw', RAW_BODY));
      const xml = await svix.message.create(
        app.id,
        messageInRaw('note.raw', '<a b="1"/>', 'application/xml; charset=utf-8'),
      );
      const json = await svix.message.create(app.id, { eventType: 'note.json', payload: { z: 1, a: [true, null] } });
      const seen = await receiver.waitForCount(3, 30_000, (r) => r.path === '/raw');
      const byId = new Map(seen.map((r) => [r.webhookId, r]));
      const rawSeen = byId.get(plain.id)!;
      assert.equal(rawSeen.bodySha256, sha256(RAW_BODY), 'the raw body, byte for byte');
      assert.equal(rawSeen.headers['content-type'], 'text/plain');
      assert.equal(byId.get(xml.id)!.body, '<a b="1"/>');
      assert.equal(byId.get(xml.id)!.headers['content-type'], 'application/xml; charset=utf-8');
      assert.equal(byId.get(json.id)!.body, '{"z":1,"a":[true,null]}');
      assert.equal(byId.get(json.id)!.headers['content-type'], 'application/json');
      for (const request of seen) {
        assert.equal(request.signatureValid, true, request.verifyError ?? '');
        verifyBothWays(secret, request);
      }
      // The API returns the raw body (as a JSON string) where it returns payloads.
      assert.equal((await svix.message.get(app.id, plain.id, { withContent: true })).payload, RAW_BODY);
    },
  );

  test(
    'a message with deliverAt one second ahead is echoed, not attempted before it, attempted after it, and a ' +
      'restart in between keeps it',
    async () => {
      let svix = new Svix(TOKEN, { serverUrl: tidings.apiUrl! });
      const app = await svix.application.create({ name: 'scheduled' });
      await endpoint(svix, app.id, '/later');
      const deliverAt = new Date(Date.now() + 1000);
      const msg = await svix.message.create(app.id, { eventType: 'note.later', payload: { later: true }, deliverAt });
      assert.equal(msg.deliverAt?.toISOString(), deliverAt.toISOString(), 'echoed');
      // Restart at once: the schedule is in the database, not in the process that accepted the message.
      await tidings.stop();
      tidings = await start();
      svix = new Svix(TOKEN, { serverUrl: tidings.apiUrl! });
      const [request] = await receiver.waitForCount(1, 30_000, (r) => r.path === '/later');
      assert.equal(request!.webhookId, msg.id);
      assert.ok(
        request!.receivedAtMs >= deliverAt.getTime(),
        `attempted ${deliverAt.getTime() - request!.receivedAtMs} ms before deliverAt`,
      );
      const timeline = (
        await tidings.db.query<{ reason: string; at: Date }>(
          'SELECT e.reason, e.at FROM delivery_events e JOIN deliveries d ON d.id = e.delivery_id WHERE ' +
            'd.message_id = $1 ORDER BY e.id',
          [msg.id],
        )
      ).rows;
      assert.equal(timeline[0]!.reason, 'scheduled');
      assert.ok(
        timeline[1]!.reason === 'claimed' && timeline[1]!.at.getTime() >= deliverAt.getTime(),
        'claimed no earlier than deliverAt (database clock)',
      );
      assert.equal((await svix.message.get(app.id, msg.id)).deliverAt?.toISOString(), deliverAt.toISOString());
    },
  );
});

describe('scheduled messages on the embedded engine (manual clock)', () => {
  const clock = new ManualClock();
  let dataDir: string;
  let receiver: TestReceiver;
  let tidings: Running | undefined;
  let sender: Sender;
  let dispatcher: Dispatcher | undefined;

  before(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'tidings-scheduled-'));
    receiver = await startTestReceiver();
    sender = createHttpSender({
      connectTimeoutMs: 2000,
      headersTimeoutMs: 5000,
      bodyTimeoutMs: 5000,
      deadlineMs: 10_000,
      maxResponseBytes: 65536,
      responsePrefixBytes: 1024,
      maxSocketsPerOrigin: 16,
      egressAllowlist: ['127.0.0.1/32'],
      userAgent: 'test',
    });
  });
  after(async () => {
    await dispatcher?.stop();
    await tidings?.stop();
    await sender?.close();
    await receiver?.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  /** The API alone, on the data folder, on the manual clock; the test steps the dispatcher. */
  const startApi = (): Promise<Running> =>
    startTidings({
      roles: { api: true, dispatcher: false },
      clock,
      env: {
        TIDINGS_DATA_DIR: dataDir,
        TIDINGS_ENCRYPTION_KEYS: TEST_ENCRYPTION_KEYS,
        TIDINGS_API_TOKEN: TOKEN,
        HOST: '127.0.0.1',
        PORT: '0',
        TIDINGS_LOG_LEVEL: 'silent',
        TIDINGS_EGRESS_ALLOWLIST: '127.0.0.1/32',
      },
    });
  const dispatcherOn = (running: Running): Dispatcher =>
    createDispatcher({
      store: createPgDeliveryStore(running.db, testCipher()),
      sender,
      clock,
      random: cryptoRandom,
      logger: silentLogger,
      settings: {
        dispatcherId: 'manual',
        concurrency: 8,
        claimBatch: 8,
        leaseMs: 30_000,
        maxReclaims: 5,
        pollIntervalMs: 50,
        shutdownGraceMs: 0,
        retryPolicy: DEFAULT_RETRY_POLICY,
      },
    });

  test(
    'a message with deliverAt one hour ahead is not attempted before it, is attempted after it, and a restart in ' +
      'between keeps it',
    async () => {
      tidings = await startApi();
      const svix = new Svix(TOKEN, { serverUrl: tidings.apiUrl! });
      const app = await svix.application.create({ name: 'hour' });
      const secret = encodeSecret(randomBytes(32));
      await receiver.setSecret('/hour', secret);
      await svix.endpoint.create(app.id, { url: receiver.url('/hour'), secret });
      const deliverAt = new Date(clock.nowMs() + HOUR_MS);
      const msg = await svix.message.create(app.id, { eventType: 'note.hour', payload: { n: 1 }, deliverAt });
      assert.equal(msg.deliverAt?.toISOString(), deliverAt.toISOString());

      dispatcher = dispatcherOn(tidings);
      assert.equal(await dispatcher.tick(), 0, 'not due at publish time');
      clock.advance(HOUR_MS - 1000);
      assert.equal(await dispatcher.tick(), 0, 'not due one second before deliverAt');

      await dispatcher.stop();
      await tidings.stop();
      tidings = await startApi();
      dispatcher = dispatcherOn(tidings);
      assert.equal(await dispatcher.tick(), 0, 'still not due after the restart');
      clock.advance(1000);
      assert.equal(await dispatcher.tick(), 1, 'due at deliverAt');
      await dispatcher.drained();
      const [request] = await receiver.waitForCount(1, 10_000, (r) => r.path === '/hour');
      assert.equal(request!.webhookId, msg.id);
      assert.equal(request!.signatureMatches, true);
      assert.equal(
        Number(request!.headers['webhook-timestamp']) * 1000,
        deliverAt.getTime(),
        "sent at the manual clock's deliverAt",
      );
      assert.equal((await receiver.requests()).filter((r) => r.path === '/hour').length, 1, 'one attempt');
    },
  );
});
