/**
 * `tidings tail` through the API: each attempt shown once, oldest first, filtered by endpoint and outcome;
 * a credential the API refuses ends it with the status and code.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createPgDeliveryStore } from '../../src/adapters/postgres/delivery/delivery-store.ts';
import { createPgMessageStore } from '../../src/adapters/postgres/message/message-store.ts';
import { runTx } from '../../src/adapters/postgres/tx.ts';
import { cryptoRandom, systemClock } from '../../src/adapters/system/system-clock.ts';
import { createPublisher } from '../../src/app/publish.ts';
import { runTail, type TailOptions } from '../../src/main/tail.ts';
import type { AttemptRecord, ClaimedDelivery } from '../../src/ports/delivery-store.ts';
import { freshServerDatabase } from '../support/db.ts';
import { insertApp, insertEndpoint } from '../support/fixtures.ts';
import { ADMIN_TOKEN, startApi, type ApiHarness } from './api-harness.ts';

let h: ApiHarness;
let appId: string, e1: string, e2: string;
let attemptSeq = 0;

const record = (d: ClaimedDelivery, ok: boolean): AttemptRecord => ({
  deliveryId: d.deliveryId,
  fencingToken: d.fencingToken,
  dispatcherId: d.dispatcherId,
  endpointId: d.endpointId,
  attemptId: `atmpt_${String(++attemptSeq).padStart(26, '0')}`,
  attemptNumber: d.attemptNumber,
  trigger: 'scheduled',
  url: d.url,
  succeeded: ok,
  statusCode: ok ? 200 : 503,
  responseBody: '',
  location: null,
  errorKind: ok ? null : 'http_status',
  errorDetail: null,
  durationMs: 7,
  next: ok ? { next: 'succeeded' } : { next: 'retry', delayMs: 600_000 },
  throttleEndpointMs: null,
  disableEndpointReason: null,
});

/** Publishes one message (to both endpoints), claims it and records `ok1` for e1 and `ok2` for e2. */
async function attempt(ok1: boolean, ok2: boolean): Promise<void> {
  const publisher = createPublisher({
    messages: createPgMessageStore(h.database.db, h.cipher, () => undefined),
    clock: systemClock,
    random: cryptoRandom,
  });
  await runTx(h.database.db, (tx) =>
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
  const store = createPgDeliveryStore(h.database.db, h.cipher);
  const claimed = (await store.claim({ dispatcherId: 'W', limit: 10, leaseMs: 60_000, maxReclaims: 5, now: null }))
    .deliveries;
  await store.recordAttempts(
    claimed.map((d) => record(d, d.endpointId === e1 ? ok1 : ok2)),
    null,
  );
}

/** Runs the tail until it has written `count` lines; returns them. */
async function tail(
  count: number,
  options: Partial<TailOptions> = {},
  between?: () => Promise<void>,
): Promise<string[]> {
  const lines: string[] = [];
  const stop = new AbortController();
  let release: () => void = () => undefined;
  const enough = new Promise<void>((resolve) => {
    release = resolve;
  });
  let betweenDone = between === undefined;
  const done = runTail({
    baseUrl: h.url,
    token: ADMIN_TOKEN,
    app: appId,
    intervalMs: 100,
    backlog: 10,
    signal: stop.signal,
    out: (line) => {
      lines.push(line);
      if (!betweenDone) {
        betweenDone = true;
        void between!();
      }
      if (lines.length >= count) release();
    },
    ...options,
  });
  await Promise.race([enough, done]);
  stop.abort();
  await done;
  return lines;
}

before(async () => {
  h = await startApi(freshServerDatabase);
  appId = await insertApp(h.database.db);
  e1 = (await insertEndpoint(h.database.db, h.cipher, { appId, url: 'http://127.0.0.1:9/1' })).id;
  e2 = (await insertEndpoint(h.database.db, h.cipher, { appId, url: 'http://127.0.0.1:9/2' })).id;
  await attempt(true, false);
});
after(async () => {
  await h.close();
});

test('tail shows the recent attempts, then each new one once, oldest first', async () => {
  const lines = await tail(4, {}, () => attempt(false, true));
  assert.equal(lines.length, 4);
  assert.equal(new Set(lines.map((l) => l.split('  ').at(-1))).size, 4, 'each attempt once');
  assert.deepEqual(
    lines
      .slice(0, 2)
      .map((l) => l.split('  ')[1]!.trim())
      .sort(),
    ['fail', 'success'],
  );
  const ts = lines.map((l) => l.split('  ')[0]!);
  assert.deepEqual([...ts].sort(), ts, 'oldest first');
});

test('tail filters by endpoint and by outcome', async () => {
  const onlyE2 = await tail(2, { endpoint: e2 });
  assert.ok(
    onlyE2.every((l) => l.includes(e2)),
    onlyE2.join('\n'),
  );
  const fails = await tail(2, { outcome: 'fail' });
  assert.ok(
    fails.every((l) => l.split('  ')[1]!.trim() === 'fail' && /\b503\b/.test(l)),
    fails.join('\n'),
  );
});

test('a refused credential ends tail with the status and code', async () => {
  await assert.rejects(tail(1, { token: 'tidings_not_a_token_0123456789' }), /401 authentication_failed/);
  await assert.rejects(tail(1, { app: 'app_nope' }), /404 not_found/);
});
