/**
 * What an attempt record keeps, and for whom: the tenant's view never tells what a name resolves to; the
 * operator's record names the addresses, the deciding setting, the signing key ids and the Retry-After;
 * response prefixes are stored encrypted and re-encrypted by key rotation; endpoint health shows
 * redirects; a fenced-out outcome is recorded apart, marked. Real loopback receiver, PostgreSQL server.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { keyRingCipher } from '../../src/adapters/crypto/key-ring.ts';
import { createHttpSender, UNRESOLVED_NAME_DETAIL } from '../../src/adapters/http-sender/http-sender.ts';
import { createPgMessageQueryStore } from '../../src/adapters/postgres/message/message-query-store.ts';
import { createPgDeliveryStore } from '../../src/adapters/postgres/delivery/delivery-store.ts';
import { createPgEndpointHealthStore } from '../../src/adapters/postgres/endpoint/endpoint-health-store.ts';
import { rotateKeys } from '../../src/adapters/postgres/key-rotation.ts';
import { createPgMessageStore } from '../../src/adapters/postgres/message/message-store.ts';
import { runTx } from '../../src/adapters/postgres/tx.ts';
import { cryptoRandom, systemClock } from '../../src/adapters/system/system-clock.ts';
import { createDispatcher } from '../../src/app/dispatcher/dispatcher.ts';
import { createPublisher } from '../../src/app/publish.ts';
import { DEFAULT_RETRY_POLICY } from '../../src/domain/retry-schedule.ts';
import { decodeSecret, signingKeyId } from '../../src/domain/signing.ts';
import { attemptOut } from '../../src/http/present.ts';
import type { AttemptView } from '../../src/ports/message-query-store.ts';
import type { Cipher } from '../../src/ports/cipher.ts';
import type { Sender } from '../../src/ports/sender.ts';
import { freshServerDatabase, type TestDatabase } from '../support/db.ts';
import { insertApp, insertEndpoint } from '../support/fixtures.ts';
import { recordingLogger } from '../support/logger.ts';
import { startTestReceiver, type TestReceiver } from '../support/test-receiver.ts';

const ring1 = keyRingCipher([{ id: 'k1', key: Buffer.alloc(32, 1) }]);
const ring21 = keyRingCipher([
  { id: 'k2', key: Buffer.alloc(32, 2) },
  { id: 'k1', key: Buffer.alloc(32, 1) },
]);
const ring2 = keyRingCipher([{ id: 'k2', key: Buffer.alloc(32, 2) }]);

describe('the attempt record (PostgreSQL server, loopback receiver)', () => {
  let t: TestDatabase;
  let receiver: TestReceiver;
  let sender: Sender;
  const logger = recordingLogger();
  before(async () => {
    t = await freshServerDatabase();
    receiver = await startTestReceiver();
    // An internal name of the operator's network: resolved by the guard, refused, never connected to.
    sender = createHttpSender({
      connectTimeoutMs: 2000,
      headersTimeoutMs: 3000,
      bodyTimeoutMs: 3000,
      deadlineMs: 4000,
      maxResponseBytes: 4096,
      responsePrefixBytes: 256,
      maxSocketsPerOrigin: 8,
      egressAllowlist: ['127.0.0.1/32'],
      userAgent: 'test',
      lookup: (host, _o, cb) =>
        host === 'vm.internal'
          ? cb(null, [
              { address: '10.0.0.5', family: 4 },
              { address: '203.0.113.9', family: 4 },
            ])
          : cb(Object.assign(new Error('ENOTFOUND'), { code: 'ENOTFOUND' }), []),
    });
  });
  after(async () => {
    await sender.close();
    await receiver.stop();
    await t.drop();
  });
  beforeEach(async () => {
    await t.db.query(`UPDATE deliveries SET state = 'canceled' WHERE state IN ('pending', 'leased')`);
  });

  /**
   * Publishes one message to a new endpoint at `url`, runs one claim and waits for its attempt; returns the attempt's
   * views.
   */
  async function attemptAt(
    url: string,
    cipher: Cipher = ring1,
  ): Promise<{ appId: string; endpointId: string; secret: string; view: AttemptView }> {
    const appId = await insertApp(t.db);
    const ep = await insertEndpoint(t.db, cipher, { appId, url });
    const publisher = createPublisher({
      messages: createPgMessageStore(t.db, cipher, () => undefined),
      clock: systemClock,
      random: cryptoRandom,
    });
    const { message } = await runTx(t.db, (tx) =>
      publisher.publish(tx, {
        appId,
        eventType: 'e',
        eventId: null,
        channels: null,
        tags: null,
        payload: Buffer.from('{"a":1}'),
        retentionHours: null,
      }),
    );
    const dispatcher = createDispatcher({
      store: createPgDeliveryStore(t.db, cipher),
      sender,
      clock: systemClock,
      random: cryptoRandom,
      logger,
      settings: {
        dispatcherId: 'W',
        concurrency: 4,
        claimBatch: 4,
        leaseMs: 30_000,
        maxReclaims: 5,
        pollIntervalMs: 1000,
        shutdownGraceMs: 100,
        retryPolicy: DEFAULT_RETRY_POLICY,
      },
    });
    assert.equal(await dispatcher.tick(), 1);
    await dispatcher.drained();
    const id = (await t.db.query<{ id: string }>('SELECT id FROM attempts WHERE message_id = $1', [message.id]))
      .rows[0]!.id;
    const view = (await createPgMessageQueryStore(t.db, cipher).findAttempt(appId, message.id, id))!;
    return { appId, endpointId: ep.id, secret: ep.secret, view };
  }

  test(
    'a name that resolves to a refused address reads like a name that does not resolve: same kind, words and ' +
      'duration for the tenant; only the operator sees what the name resolved to and the setting that decides ' +
      '(regression: a tenant could tell which internal names exist)',
    async () => {
      const refusedName = await attemptAt('http://vm.internal:8080/hook');
      const unknownName = await attemptAt('http://nowhere.internal:8080/hook');
      const tenantView = (view: AttemptView) => {
        const out = attemptOut(view, { withContent: true, withMsg: false });
        return {
          errorKind: out.errorKind,
          response: out.response,
          responseStatusCode: out.responseStatusCode,
          responseDurationMs: out.responseDurationMs,
        };
      };
      assert.deepEqual(
        tenantView(refusedName.view),
        tenantView(unknownName.view),
        'the tenant cannot tell the two apart',
      );
      assert.deepEqual(tenantView(refusedName.view), {
        errorKind: 'dns',
        response: UNRESOLVED_NAME_DETAIL,
        responseStatusCode: 0,
        responseDurationMs: 0,
      });
      const tenant = JSON.stringify(attemptOut(refusedName.view, { withContent: true, withMsg: false }));
      assert.doesNotMatch(
        tenant,
        /10\.0\.0\.5|203\.0\.113|internal resolved|ENOTFOUND/,
        "the tenant learns nothing of the operator's network",
      );
      const stored = (
        await t.db.query<{ error_detail: string }>('SELECT error_detail FROM attempts WHERE id = $1', [
          refusedName.view.id,
        ])
      ).rows[0]!;
      assert.equal(stored.error_detail, UNRESOLVED_NAME_DETAIL);
      const operator = attemptOut(refusedName.view, {
        withContent: true,
        withMsg: false,
        operator: true,
      }).operatorDetail!;
      assert.deepEqual(operator.resolvedAddresses, ['10.0.0.5', '203.0.113.9']);
      assert.equal(operator.connectedAddress, null, 'nothing was connected to');
      assert.equal(operator.decidedBy, 'TIDINGS_EGRESS_ALLOWLIST');
      assert.match(String(operator.reason), /vm\.internal resolved to 10\.0\.0\.5/);
      const lookup = attemptOut(unknownName.view, {
        withContent: true,
        withMsg: false,
        operator: true,
      }).operatorDetail!;
      assert.match(String(lookup.reason), /lookup of nowhere\.internal failed: ENOTFOUND/);
      assert.equal(lookup.resolvedAddresses, undefined);
      const lines = logger.lines
        .filter((l) => l.msg === 'attempt refused or cut by a limit')
        .map((l) => JSON.stringify(l.obj));
      assert.ok(
        lines.some((l) => /10\.0\.0\.5/.test(l)),
        "the operator's log has what the name resolved to",
      );
      assert.ok(
        lines.some((l) => /nowhere\.internal failed: ENOTFOUND/.test(l)),
        'and the failed lookup',
      );
    },
  );

  test(
    "the operator's record names the signing key id, every resolved address and the one connected to, and the " +
      'Retry-After received and applied',
    async () => {
      await receiver.script('/busy', [], { status: 503, headers: { 'retry-after': '7' } });
      const { view, secret } = await attemptAt(receiver.url('/busy'));
      const detail = view.operatorDetail as Record<string, unknown>;
      assert.deepEqual(detail.signedWith, [signingKeyId(decodeSecret(secret))]);
      assert.doesNotMatch(
        JSON.stringify(detail),
        new RegExp(secret.slice(6, 20).replace(/[+/]/g, '.')),
        'no secret, only its id',
      );
      assert.deepEqual(detail.resolvedAddresses, ['127.0.0.1']);
      assert.equal(detail.connectedAddress, `127.0.0.1:${receiver.port}`);
      assert.deepEqual(
        detail.retryAfter,
        { received: '7', delayMs: 7000, applied: true },
        'longer than the 5 s ± 20 % of the schedule: applied',
      );
    },
  );

  test('a response cut at the byte limit names TIDINGS_MAX_RESPONSE_BYTES for the operator', async () => {
    await receiver.script('/big', [], { status: 200, bodyBytes: 100_000 });
    const { view } = await attemptAt(receiver.url('/big'));
    assert.equal((view.operatorDetail as Record<string, unknown>).decidedBy, 'TIDINGS_MAX_RESPONSE_BYTES');
  });

  test('endpoint health shows an endpoint that answers redirects, with the Location', async () => {
    await receiver.script('/moved', [], { status: 302, headers: { location: 'https://elsewhere.example/hook' } });
    const { endpointId } = await attemptAt(receiver.url('/moved'));
    const health = (await createPgEndpointHealthStore(t.db, () => undefined).health(endpointId, null))!;
    assert.equal(health.windows[0]!.redirects, 1);
    assert.equal(health.lastRedirect?.statusCode, 302);
    assert.equal(health.lastRedirect?.location, 'https://elsewhere.example/hook');
  });

  test('response prefixes are stored encrypted, read back decrypted, and re-encrypted by keys rotate', async () => {
    const marker = `ECHO-${Date.now()}-customer-data`;
    await receiver.script('/echo', [], { status: 200, body: marker });
    const { appId, view } = await attemptAt(receiver.url('/echo'));
    assert.equal(view.responseBody, marker);
    const raw = async () =>
      (
        await t.db.query<{ body: Buffer; key: string }>(
          'SELECT response_body AS body, response_body_key_id AS key FROM attempts WHERE id = $1',
          [view.id],
        )
      ).rows[0]!;
    const before = await raw();
    assert.equal(before.key, 'k1');
    assert.ok(!before.body.includes(marker), 'no plain text in the column');
    const report = await rotateKeys(t.db, ring21, { batchSize: 50 });
    assert.ok((report.rewritten['attempts.response_body'] ?? 0) >= 1);
    assert.equal(report.remaining['attempts.response_body'], 0);
    assert.equal((await raw()).key, 'k2');
    const reread = await createPgMessageQueryStore(t.db, ring2).findAttempt(appId, view.messageId, view.id);
    assert.equal(reread?.responseBody, marker, 'readable with the new key alone');
  });

  test("a fenced-out outcome is recorded apart, marked, and not written into the delivery's history", async () => {
    const appId = await insertApp(t.db);
    await insertEndpoint(t.db, ring1, { appId, url: receiver.url('/fenced') });
    const publisher = createPublisher({
      messages: createPgMessageStore(t.db, ring1, () => undefined),
      clock: systemClock,
      random: cryptoRandom,
    });
    await runTx(t.db, (tx) =>
      publisher.publish(tx, {
        appId,
        eventType: 'e',
        eventId: null,
        channels: null,
        tags: null,
        payload: Buffer.from('{}'),
        retentionHours: null,
      }),
    );
    const store = createPgDeliveryStore(t.db, ring1);
    const d = (await store.claim({ dispatcherId: 'old', limit: 1, leaseMs: 30_000, maxReclaims: 5, now: null }))
      .deliveries[0]!;
    await t.db.query('UPDATE deliveries SET fencing_token = fencing_token + 1, dispatcher_id = $2 WHERE id = $1', [
      d.deliveryId,
      'new',
    ]); // taken over
    const result = await store.recordAttempts(
      [
        {
          deliveryId: d.deliveryId,
          fencingToken: d.fencingToken,
          dispatcherId: 'old',
          endpointId: d.endpointId,
          attemptId: 'atmpt_fenced_1',
          attemptNumber: 1,
          trigger: 'scheduled',
          url: d.url,
          succeeded: false,
          statusCode: 500,
          responseBody: 'late',
          location: null,
          errorKind: 'http_status',
          errorDetail: null,
          durationMs: 9,
          next: { next: 'retry', delayMs: 1000 },
          throttleEndpointMs: null,
          disableEndpointReason: null,
          operatorDetail: { connectedAddress: '127.0.0.1:1' },
        },
      ],
      null,
    );
    assert.deepEqual(result.fencedOut, [d.deliveryId]);
    const fenced = (
      await t.db.query(
        'SELECT id, dispatcher_id, fencing_token::text AS token, response_status_code AS status FROM ' +
          'fenced_attempts WHERE delivery_id = $1',
        [d.deliveryId],
      )
    ).rows;
    assert.deepEqual(fenced, [{ id: 'atmpt_fenced_1', dispatcher_id: 'old', token: d.fencingToken, status: 500 }]);
    assert.equal(
      (await t.db.query('SELECT 1 FROM attempts WHERE delivery_id = $1', [d.deliveryId])).rows.length,
      0,
      "the delivery's history has no attempt of the fenced-out outcome",
    );
  });
});
