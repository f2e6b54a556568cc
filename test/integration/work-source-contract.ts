/**
 * The contract every transport keeps as a dispatcher's work source (src/ports/work-source.ts,
 * docs/guides/transports.md), as a suite a test file runs for one transport: `workSourceContract(transport)`. The
 * PostgreSQL transport (the claim) passes it as the reference; a broker transport passes it with its outbox and its
 * fenced claim by id. The suite drives the sources directly (no HTTP): real PostgreSQL, a manual clock, the records
 * written through the delivery store, and for a broker a round of the outbox (`pump`) whose published ids the suite
 * waits for (`arrived`).
 */
import assert from 'node:assert/strict';
import { after, afterEach, before, beforeEach, describe, test } from 'node:test';
import { createPgDeliveryStore } from '../../src/adapters/postgres/delivery/delivery-store.ts';
import { createPgMessageStore } from '../../src/adapters/postgres/message/message-store.ts';
import { runTx } from '../../src/adapters/postgres/tx.ts';
import { cryptoRandom } from '../../src/adapters/system/system-clock.ts';
import type { Db } from '../../src/adapters/postgres/db.ts';
import { createPublisher } from '../../src/app/publish.ts';
import type { Cipher } from '../../src/ports/cipher.ts';
import type { ClaimedDelivery } from '../../src/ports/delivery-store.ts';
import type { TakeRequest, WorkSource } from '../../src/ports/work-source.ts';
import { testCipher } from '../support/cipher.ts';
import { freshServerDatabase, type TestDatabase } from '../support/db.ts';
import { deferred } from '../support/deferred.ts';
import { insertApp, insertEndpoint, succeededRecord } from '../support/fixtures.ts';
import { ManualClock } from '../support/manual-clock.ts';

const LEASE_MS = 10_000;

/** One transport's sources over a database. */
export interface TransportFixture {
  /** The work source of one dispatcher (a broker: one consumer of its own). */
  source(dispatcherId: string): WorkSource;
  /**
   * Makes what is due now reachable by the sources: a broker publishes it (one outbox round); returns the ids
   * published.
   */
  pump(): Promise<readonly string[]>;
  /**
   * Resolves once the sources received, in all, a message for each id published for it so far (by pump or duplicate).
   */
  arrived(ids: readonly string[]): Promise<void>;
  /**
   * Publishes `ids` again behind the outbox's back, as a broker redelivers or a sweep duplicates (a no-op without a
   * broker).
   */
  duplicate(items: readonly { deliveryId: string; endpointId: string }[]): Promise<void>;
  /** A broker: its next publish fails (the broker confirms none of the ids). */
  failNextPublish?(): void;
  /** A broker: the ids the outbox's sweep published again so far. */
  sweptCount?(): number;
  /** Ends the sources made since the last call (their messages not settled go back to the broker). */
  endTest(): Promise<void>;
  close(): Promise<void>;
}

/** How a test file gives the suite its transport. */
export interface TransportUnderTest {
  readonly name: string;
  open(db: Db, cipher: Cipher, clock: ManualClock): Promise<TransportFixture>;
}

/** A source connected to a sink that counts wake-ups; `take` with the window of an idle dispatcher. */
class Taker {
  readonly taken: ClaimedDelivery[] = [];
  readonly source: WorkSource;
  readonly dispatcherId: string;
  readonly #clock: ManualClock;
  #disconnect: () => void;

  constructor(source: WorkSource, dispatcherId: string, clock: ManualClock) {
    this.source = source;
    this.dispatcherId = dispatcherId;
    this.#clock = clock;
    this.#disconnect =
      source.connect?.({ wake: () => undefined, yours: () => undefined, room: () => null }) ?? (() => undefined);
  }

  async take(limit = 100, excludeEndpoints: readonly string[] = []): Promise<ClaimedDelivery[]> {
    const request: TakeRequest = {
      dispatcherId: this.dispatcherId,
      limit,
      excludeEndpoints,
      leaseMs: LEASE_MS,
      maxReclaims: 5,
      now: this.#clock.sqlNow(),
      window: { share: limit, held: new Map(), answering: [], unresponsive: [], budget: limit },
    };
    const got = await this.source.take!(request);
    this.taken.push(...got.deliveries);
    return [...got.deliveries];
  }

  stop(): void {
    this.#disconnect();
  }
}

export function workSourceContract(transport: TransportUnderTest): void {
  describe(`work-source contract: ${transport.name}`, () => {
    let t: TestDatabase;
    let fixture: TransportFixture;
    const cipher = testCipher();
    const clock = new ManualClock();
    const takers: Taker[] = [];
    before(async () => {
      t = await freshServerDatabase();
      fixture = await transport.open(t.db, cipher, clock);
    });
    after(async () => {
      for (const taker of takers) taker.stop();
      await fixture?.close();
      await t?.drop();
    });
    afterEach(async () => {
      for (const taker of takers.splice(0)) taker.stop();
      await fixture.endTest();
    });
    // Each test sees only its own due deliveries.
    beforeEach(async () => {
      await t.db.query(
        `UPDATE deliveries SET state = 'canceled', lease_expires_at = NULL WHERE state IN ('pending', 'leased')`,
      );
    });

    const store = () => createPgDeliveryStore(t.db, cipher);
    const taker = (dispatcherId: string): Taker => {
      const k = new Taker(fixture.source(dispatcherId), dispatcherId, clock);
      takers.push(k);
      return k;
    };
    let takersMade = 0;
    const twoTakers = (): [Taker, Taker] => {
      takersMade += 1;
      return [taker(`A${takersMade}`), taker(`B${takersMade}`)];
    };
    const oneTaker = (): Taker => {
      takersMade += 1;
      return taker(`A${takersMade}`);
    };
    /** Takes from each taker in turn (a broker hands each message to one of them). */
    const takeAll = async (...from: Taker[]): Promise<ClaimedDelivery[]> => {
      const got: ClaimedDelivery[] = [];
      for (const k of from) got.push(...(await k.take()));
      return got;
    };
    const sourceOf = (d: ClaimedDelivery, ...from: Taker[]): WorkSource =>
      from.find((k) => k.dispatcherId === d.dispatcherId)!.source;

    /** An application with `n` endpoints, each with `settings` written on its row. */
    async function endpoints(n: number, settings = ''): Promise<{ appId: string; ids: string[] }> {
      const appId = await insertApp(t.db);
      const ids: string[] = [];
      for (let i = 0; i < n; i += 1)
        ids.push((await insertEndpoint(t.db, cipher, { appId, url: 'http://127.0.0.1:9/' })).id);
      if (settings !== '') await t.db.query(`UPDATE endpoints SET ${settings} WHERE app_id = $1`, [appId]);
      return { appId, ids };
    }

    async function publish(appId: string, count: number): Promise<void> {
      const publisher = createPublisher({
        messages: createPgMessageStore(t.db, cipher, () => undefined),
        clock,
        random: cryptoRandom,
      });
      for (let i = 0; i < count; i++) {
        await runTx(t.db, (tx) =>
          publisher.publish(tx, {
            appId,
            eventType: 'user.created',
            eventId: null,
            channels: null,
            tags: null,
            payload: Buffer.from(`{"n":${i}}`),
            retentionHours: null,
          }),
        );
      }
      clock.advance(1);
    }

    /** Publishes what is due through the transport and waits until the sources received it. */
    async function pump(): Promise<readonly string[]> {
      const ids = await fixture.pump();
      await fixture.arrived(ids);
      return ids;
    }

    const record = async (d: ClaimedDelivery, next: 'ok' | number, source: WorkSource) => {
      const base = succeededRecord(d);
      const rec =
        next === 'ok'
          ? base
          : { ...base, succeeded: false, statusCode: 500, next: { next: 'retry' as const, delayMs: next } };
      const result = await store().recordAttempts([rec], clock.sqlNow());
      source.settled?.(d, result.fencedOut.length === 0);
      clock.advance(1);
    };

    test('every due delivery is taken exactly once across two dispatchers', async () => {
      const { appId } = await endpoints(2);
      await publish(appId, 3);
      const [a, b] = twoTakers();
      const published = await pump();
      const taken = [...(await a.take(4)), ...(await takeAll(b, a, b))];
      assert.equal(taken.length, 6);
      assert.equal(new Set(taken.map((d) => d.deliveryId)).size, 6, 'no delivery twice');
      if (published.length > 0) assert.deepEqual([...published].sort(), taken.map((d) => d.deliveryId).sort());
      for (const d of taken) await record(d, 'ok', sourceOf(d, a, b));
      await pump();
      assert.deepEqual(await takeAll(a, b), [], 'nothing after the records');
    });

    test('an id whose publish failed is published again by the next round, not by the sweep', async (ctx) => {
      if (fixture.failNextPublish === undefined || fixture.sweptCount === undefined) {
        ctx.skip('no broker');
        return;
      }
      const { appId } = await endpoints(1);
      await publish(appId, 1);
      const a = oneTaker();
      fixture.failNextPublish();
      assert.deepEqual(await pump(), [], 'the failed round published nothing');
      const again = await pump();
      assert.equal(again.length, 1, 'the next round published the id again');
      assert.equal(fixture.sweptCount(), 0, 'without the sweep');
      assert.deepEqual(
        (await a.take()).map((d) => d.deliveryId),
        again,
      );
    });

    test('a duplicated or redelivered id leases nothing twice', async () => {
      const { appId, ids } = await endpoints(1);
      await publish(appId, 1);
      const [a, b] = twoTakers();
      await pump();
      const [d] = await takeAll(a, b);
      assert.ok(d);
      await fixture.duplicate([{ deliveryId: d.deliveryId, endpointId: ids[0]! }]);
      await fixture.arrived([d.deliveryId]);
      assert.deepEqual(await takeAll(b, a), [], 'the live lease is not taken again');
      await record(d, 'ok', sourceOf(d, a, b));
      await fixture.duplicate([{ deliveryId: d.deliveryId, endpointId: ids[0]! }]);
      await fixture.arrived([d.deliveryId]);
      assert.deepEqual(await takeAll(b, a), [], 'nor the recorded delivery');
    });

    test('a retry is taken again only once it is due', async () => {
      const { appId } = await endpoints(1);
      await publish(appId, 1);
      const a = oneTaker();
      await pump();
      const [d] = await a.take();
      assert.ok(d);
      await record(d, 500, a.source);
      await pump();
      assert.deepEqual(await a.take(), [], 'not before its time');
      clock.advance(500);
      await pump();
      const again = await a.take();
      assert.deepEqual(
        again.map((x) => [x.deliveryId, x.attemptNumber]),
        [[d.deliveryId, 2]],
      );
    });

    test(
      'an expired lease is taken again by another dispatcher, ' + 'counted as reclaimed, with a new fencing token',
      async () => {
        const { appId } = await endpoints(1);
        await publish(appId, 1);
        const [a, b] = twoTakers();
        await pump();
        const [d] = await takeAll(a, b);
        assert.ok(d);
        clock.advance(LEASE_MS + 1);
        await pump();
        const [again] = await takeAll(a, b);
        assert.equal(again?.deliveryId, d.deliveryId);
        assert.equal(again?.reclaimed, true);
        assert.equal(BigInt(again!.fencingToken), BigInt(d.fencingToken) + 1n);
      },
    );

    test('a paused endpoint is not taken from; resumed, it is', async () => {
      const { appId, ids } = await endpoints(2);
      await publish(appId, 2);
      const a = oneTaker();
      await pump();
      await t.db.query(`UPDATE endpoints SET status = 'paused' WHERE id = $1`, [ids[0]]);
      await t.db.query(
        `UPDATE deliveries SET next_attempt_at = 'infinity' WHERE endpoint_id = $1 AND state = 'pending'`,
        [ids[0]],
      );
      const taken = await a.take();
      assert.deepEqual([...new Set(taken.map((d) => d.endpointId))], [ids[1]], 'only the active endpoint');
      clock.advance(1);
      await t.db.query(`UPDATE endpoints SET status = 'active' WHERE id = $1`, [ids[0]]);
      await t.db.query(`UPDATE deliveries SET next_attempt_at = $2 WHERE endpoint_id = $1 AND state = 'pending'`, [
        ids[0],
        clock.sqlNow(),
      ]);
      clock.advance(1);
      await pump();
      const resumed = await a.take();
      assert.deepEqual(
        resumed.map((d) => d.endpointId),
        [ids[0], ids[0]],
      );
    });

    test('an open breaker holds its endpoint until the cool-down ends, then lets exactly one probe out', async () => {
      const { appId } = await endpoints(1);
      await publish(appId, 3);
      await t.db.query(`UPDATE endpoints SET breaker_state = 'open', breaker_open_until = $2 WHERE app_id = $1`, [
        appId,
        new Date(clock.nowMs() + 1_000),
      ]);
      const [a, b] = twoTakers();
      await pump();
      assert.deepEqual(await takeAll(a, b), [], 'nothing during the cool-down');
      clock.advance(1_000);
      await pump();
      const probes = await takeAll(a, b, a, b);
      assert.equal(probes.length, 1, 'one probe');
    });

    test('an in-flight cap holds across two dispatchers', async () => {
      const { appId } = await endpoints(1, 'max_in_flight = 2');
      await publish(appId, 5);
      const [a, b] = twoTakers();
      await pump();
      const first = await takeAll(a, b, a, b);
      assert.equal(first.length, 2, 'the cap');
      await record(first[0]!, 'ok', sourceOf(first[0]!, a, b));
      await pump();
      const next = await takeAll(b, a, b, a);
      assert.equal(next.length, 1, 'one slot freed, one taken');
    });

    test('a rate limit holds across two dispatchers', async () => {
      const { appId } = await endpoints(1, 'rate_limit_per_s = 2, rate_burst = 2');
      await publish(appId, 6);
      const [a, b] = twoTakers();
      await pump();
      const first = await takeAll(a, b, a, b);
      assert.equal(first.length, 2, 'the burst');
      clock.advance(500);
      await pump();
      const next = await takeAll(b, a, b, a);
      assert.equal(next.length, 1, 'one token in half a second');
    });

    test('an endpoint the dispatcher excludes (its share used up) is not taken from; later it is', async () => {
      const { appId, ids } = await endpoints(2);
      await publish(appId, 2);
      const a = oneTaker();
      await pump();
      const first = await a.take(100, [ids[0]!]);
      assert.deepEqual([...new Set(first.map((d) => d.endpointId))], [ids[1]]);
      await pump();
      const later = await a.take(100);
      assert.deepEqual(
        later.map((d) => d.endpointId),
        [ids[0], ids[0]],
      );
    });
  });
}

/** Resolves once `check` holds, re-checked each time `poke` is called; fails after `ms`. */
export function waitFor(check: () => boolean, what: string, ms = 10_000): { poke: () => void; done: Promise<void> } {
  const d = deferred();
  const timer = setTimeout(() => d.reject(new Error(`timed out waiting for ${what}`)), ms);
  const poke = (): void => {
    if (check()) {
      clearTimeout(timer);
      d.resolve();
    }
  };
  poke();
  return { poke, done: d.promise };
}
