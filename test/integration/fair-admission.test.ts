/**
 * Fair admission between credentials (TIDINGS_API_FAIR_SLOTS, ADR 0027), on a real API over PostgreSQL: one
 * tenant's backlog waits in its own queue while another tenant's requests are admitted in turn. Regression:
 * one tenant's 32 connections, within its own limits, made another's publishes wait behind all of them
 * (p99 7 ms → 700 ms).
 *
 * Deterministic: tenant A's requests are endpoint updates that block on row locks this test holds (one per
 * endpoint), so a slot is freed exactly when the test lets one of them commit; what is checked is the order of
 * admission (the queue's counts and which answers arrive), not a duration.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { freshServerDatabase } from '../support/db.ts';
import { openSocket } from '../support/raw-http.ts';
import { startApi, type ApiHarness } from './api-harness.ts';

/** Bound on waiting for something the test expects to happen (not a latency threshold: failure ends here). */
const WAIT_MS = 15_000;

/** Resolves once `check` holds, polling every 5 ms; rejects naming `what` after {@link WAIT_MS}. */
async function until(what: string, check: () => boolean | Promise<boolean>): Promise<void> {
  const end = Date.now() + WAIT_MS;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for: ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** `p` settled within {@link WAIT_MS}, else rejects naming `what`. */
async function within<T>(what: string, p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`not answered: ${what}`)), WAIT_MS);
  });
  try {
    return await Promise.race([p, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** A row lock on one endpoint, held by a transaction of its own until `free`. */
interface RowLock {
  free(): Promise<void>;
}

describe('fair admission between credentials', () => {
  let api: ApiHarness;
  const locks: pg.Client[] = [];
  before(async () => {
    api = await startApi(freshServerDatabase, { TIDINGS_API_FAIR_SLOTS: '3', TIDINGS_DB_POOL_SIZE: '20' });
  });
  after(async () => {
    await Promise.all(locks.map((c) => c.end().catch(() => undefined)));
    await api?.close();
  });

  const lockEndpoint = async (endpointId: string): Promise<RowLock> => {
    const client = new pg.Client({ connectionString: api.database.url! });
    locks.push(client);
    await client.connect();
    await client.query('BEGIN');
    const held = await client.query('SELECT 1 FROM endpoints WHERE id = $1 FOR UPDATE', [endpointId]);
    assert.equal(held.rowCount, 1);
    let freed = false;
    return {
      async free() {
        if (freed) return;
        freed = true;
        await client.query('COMMIT');
        await client.end();
      },
    };
  };

  /** A tenant: an application, `endpoints` endpoints on it, and a key of its own. */
  const tenant = async (name: string, endpoints: number) => {
    const app = await api.svix.application.create({ name });
    const ids: string[] = [];
    for (let i = 0; i < endpoints; i += 1)
      ids.push((await api.svix.endpoint.create(app.id, { url: `http://127.0.0.1:9/${name}/${i}` })).id);
    return { app: app.id, endpoints: ids, token: await api.appKey(app.id) };
  };
  const patch = (t: { app: string; token: string }, endpointId: string) =>
    api
      .request('PATCH', `/api/v1/app/${t.app}/endpoint/${endpointId}`, {
        token: t.token,
        body: JSON.stringify({ description: 'patched' }),
      })
      .then((r) => r.status);
  const read = (t: { app: string; token: string }) =>
    api.request('GET', `/api/v1/app/${t.app}`, { token: t.token }).then((r) => r.status);
  const stats = () => api.app.fairAdmissionStats();

  test(
    "tenant A holds every slot and has 9 more waiting: tenant B's request is admitted and answered while A's " +
      'backlog still waits',
    async () => {
      const a = await tenant('flood-a', 12);
      const b = await tenant('quiet-b', 0);
      const held = await Promise.all(a.endpoints.map(lockEndpoint));
      try {
        const floods = a.endpoints.map((id) => patch(a, id));
        await until('A runs 3 and 9 wait', () => stats().running === 3 && stats().waiting === 9);

        assert.equal(await within("B's read", read(b)), 200, "B's first request does not wait for A's slots");
        assert.deepEqual(stats(), { running: 3, waiting: 9 }, "A's backlog has not moved");

        for (const lock of held) await lock.free();
        assert.deepEqual(
          await Promise.all(floods),
          Array(12).fill(200),
          "A's backlog is served once its rows are free",
        );
        assert.deepEqual(stats(), { running: 0, waiting: 0 });
      } finally {
        await Promise.all(held.map((l) => l.free()));
      }
    },
  );

  test('with A and B both waiting, a freed slot goes to each in turn: B is admitted second, not eleventh', async () => {
    const a = await tenant('turn-a', 11);
    const b = await tenant('turn-b', 2);
    const heldA = await Promise.all(a.endpoints.map(lockEndpoint));
    const heldB = await Promise.all(b.endpoints.map(lockEndpoint));
    try {
      // Three slots: A's first and B's first two run (each blocked on its row); A's next 10 wait, then B's third.
      const aFirst = patch(a, a.endpoints[0]!);
      await until('A runs one', () => stats().running === 1);
      const bFirst = b.endpoints.map((id) => patch(b, id));
      await until('B runs two', () => stats().running === 3);
      const aBacklog = a.endpoints.slice(1).map((id) => patch(a, id));
      await until('A has 10 waiting', () => stats().waiting === 10);
      const bThird = read(b);
      await until("B's third waits too", () => stats().waiting === 11);

      // A's first ends: its slot goes to A (whose turn it is: A waited first); that one blocks on its row.
      await heldA[0]!.free();
      assert.equal(await within("A's first", aFirst), 200);
      await until('one of A admitted', () => stats().waiting === 10);
      // One of B's ends (B still runs one): the slot goes to B's third (B's turn), not to A's next.
      await heldB[0]!.free();
      assert.equal(await within("B's first", bFirst[0]!), 200);
      assert.equal(await within("B's third", bThird), 200, "B's third request is admitted next and answered");
      // B's third freed its slot as its answer was built, and the next of A took it (blocked on its row).
      assert.deepEqual(stats(), { running: 3, waiting: 8 }, 'eight of A still wait: B was not served after them');

      for (const lock of [...heldA.slice(1), heldB[1]!]) await lock.free();
      assert.deepEqual(await Promise.all([...aBacklog, bFirst[1]!]), Array(11).fill(200));
      assert.deepEqual(stats(), { running: 0, waiting: 0 });
    } finally {
      await Promise.all([...heldA, ...heldB].map((l) => l.free()));
    }
  });

  test('a request whose client leaves while it waits leaves the queue, takes no slot and never runs', async () => {
    const a = await tenant('leaves-a', 4);
    const held = await Promise.all(a.endpoints.slice(0, 3).map(lockEndpoint));
    try {
      const running = a.endpoints.slice(0, 3).map((id) => patch(a, id));
      await until('A runs 3', () => stats().running === 3);
      const body = JSON.stringify({ description: 'from a client that left' });
      const socket = await openSocket(Number(new URL(api.url).port));
      socket.on('error', () => undefined);
      socket.write(
        `PATCH /api/v1/app/${a.app}/endpoint/${a.endpoints[3]} HTTP/1.1\r\nHost: t\r\n` +
          `Authorization: Bearer ${a.token}\r\nContent-Type: application/json\r\n` +
          `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
      await until('its request waits', () => stats().waiting === 1);
      socket.destroy();
      await until('it left the queue', () => stats().waiting === 0);
      assert.equal(stats().running, 3, 'and took no slot');

      for (const lock of held) await lock.free();
      assert.deepEqual(await Promise.all(running), [200, 200, 200]);
      assert.deepEqual(stats(), { running: 0, waiting: 0 });
      const endpoint = await api.svix.endpoint.get(a.app, a.endpoints[3]!);
      assert.notEqual(endpoint.description, 'from a client that left', 'the request that waited never ran');
    } finally {
      await Promise.all(held.map((l) => l.free()));
    }
  });
});
