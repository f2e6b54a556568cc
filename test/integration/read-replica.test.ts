/**
 * The heavy reads on a real streaming read replica (docs/guides/poolers-and-replicas.md, ADR 0022): a private
 * primary cluster and a replica made from it with `pg_basebackup -R`; the API and a dispatcher in this process with
 * TIDINGS_READ_DATABASE_URL on the replica. With the replica's replay paused the test knows what it holds, so a
 * list that misses a message the primary has was served by the replica. PostgreSQL server only.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { Svix } from 'svix';
import { encodeSecret } from '../../src/domain/signing.ts';
import { startTidings, type Running } from '../../src/main/compose.ts';
import { TEST_ENCRYPTION_KEYS } from '../support/cipher.ts';
import { LogTap } from '../support/log-tap.ts';
import { startPgCluster, type PgCluster } from '../support/pg-cluster.ts';
import { startTestReceiver, type TestReceiver } from '../support/test-receiver.ts';

/** The fields of an API answer the test reads. */
type Answer = { readonly id: string; readonly data: readonly { readonly id: string }[] };

const TOKEN = `replica_${randomBytes(12).toString('hex')}`;
const MAX_LAG_MS = 3_000;
const WAIT_MS = 20_000;
const LAGGING_LINE = 'read replica lags past TIDINGS_READ_MAX_LAG: its reads go to the primary';

/** Polls `holds` every 50 ms until it is true, at most `timeoutMs` (a database row or a metric is the event). */
async function until(holds: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await holds())) {
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('heavy reads on a streaming read replica', () => {
  let primary: PgCluster;
  let replica: PgCluster;
  let tidings: Running;
  let receiver: TestReceiver;
  let appId: string;
  let endpointId: string;
  const logs = new LogTap();

  const onReplica = async <R extends pg.QueryResultRow>(sql: string): Promise<R[]> => {
    const client = new pg.Client({ connectionString: replica.url('tidings') });
    await client.connect();
    try {
      return (await client.query<R>(sql)).rows;
    } finally {
      await client.end();
    }
  };
  const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const json = body === undefined ? {} : { 'content-type': 'application/json' };
    const res = await fetch(`${tidings.apiUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${TOKEN}`, ...json, ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, json: (await res.json().catch(() => null)) as Answer };
  };
  const listed = async (): Promise<string[]> => {
    const res = await call('GET', `/api/v1/app/${appId}/msg?limit=100`);
    assert.equal(res.status, 200, JSON.stringify(res.json));
    return res.json.data.map((m) => m.id);
  };
  const metric = async (name: string, labels: Record<string, string> = {}): Promise<number> => {
    const values = (await tidings.metrics.registry.getSingleMetric(name)?.get())?.values ?? [];
    const matching = values.filter((v) => Object.entries(labels).every(([k, want]) => v.labels[k] === want));
    return matching.reduce((n, v) => n + v.value, 0);
  };
  const lagMs = async (): Promise<number> => (await metric('tidings_read_replica_lag_seconds')) * 1000;
  const lagging = (): Promise<number> => metric('tidings_read_replica_fallback_total', { reason: 'lagging' });
  const publish = async (n: number, key?: string): Promise<{ status: number; json: Answer }> => {
    const body = { eventType: 'replica.test', payload: { n } };
    return call('POST', `/api/v1/app/${appId}/msg`, body, key === undefined ? {} : { 'idempotency-key': key });
  };
  /** Waits until the replica has replayed everything the primary wrote so far. */
  const caughtUp = async (): Promise<void> => {
    const target = (await tidings.db.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn')).rows[0]!.lsn;
    const replayed = `SELECT pg_last_wal_replay_lsn() >= '${target}'::pg_lsn AS ok`;
    await until(async () => (await onReplica<{ ok: boolean }>(replayed))[0]?.ok === true, WAIT_MS, 'replica caught up');
  };
  const pauseReplay = async (): Promise<void> => {
    await onReplica('SELECT pg_wal_replay_pause()');
    const state = 'SELECT pg_get_wal_replay_pause_state() AS s';
    await until(async () => (await onReplica<{ s: string }>(state))[0]?.s === 'paused', WAIT_MS, 'replay paused');
  };

  before(async () => {
    primary = await startPgCluster();
    replica = await startPgCluster({ replicaOf: primary });
    const databaseUrl = await primary.createDatabase('tidings');
    await until(
      () =>
        onReplica('SELECT 1').then(
          () => true,
          () => false,
        ),
      WAIT_MS,
      'the database on the replica',
    );
    receiver = await startTestReceiver();
    tidings = await startTidings({
      roles: { api: true, dispatcher: true },
      logDestination: logs,
      env: {
        DATABASE_URL: databaseUrl,
        TIDINGS_READ_DATABASE_URL: replica.url('tidings'),
        TIDINGS_READ_MAX_LAG: `${MAX_LAG_MS}ms`,
        TIDINGS_READ_LAG_CHECK: '200ms',
        TIDINGS_ENCRYPTION_KEYS: TEST_ENCRYPTION_KEYS,
        TIDINGS_API_TOKEN: TOKEN,
        HOST: '127.0.0.1',
        PORT: '0',
        TIDINGS_EGRESS_ALLOWLIST: '127.0.0.1/32',
        TIDINGS_POLL_INTERVAL: '100ms',
        TIDINGS_LOG_LEVEL: 'info',
      },
    });
    const svix = new Svix(TOKEN, { serverUrl: tidings.apiUrl! });
    appId = (await svix.application.create({ name: 'replica' })).id;
    const secret = encodeSecret(randomBytes(32));
    await receiver.setSecret('/r', secret);
    endpointId = (await svix.endpoint.create(appId, { url: receiver.url('/r'), secret })).id;
  });

  after(async () => {
    await tidings?.stop().catch(() => undefined);
    await receiver?.stop();
    await replica?.destroy();
    await primary?.destroy();
  });

  test(
    'lists come from the replica: with its replay paused a new message is missing from the list, while reads ' +
      'inside write requests and by id see it at once',
    async () => {
      const before = (await publish(1)).json.id;
      await caughtUp();
      assert.ok((await listed()).includes(before));
      await pauseReplay();
      const fallbacksBefore = await metric('tidings_read_replica_fallback_total');
      const fresh = await publish(2, 'replica-key');
      assert.equal(fresh.status, 202);
      // Reads that must see the write just made: the idempotent repeat, a resend of the new message, a read by id.
      const repeat = await publish(2, 'replica-key');
      assert.equal(repeat.json.id, fresh.json.id, 'the idempotent repeat answers the stored message');
      const resend = `/api/v1/app/${appId}/msg/${fresh.json.id}/endpoint/${endpointId}/resend`;
      assert.equal((await call('POST', resend)).status, 202);
      assert.equal((await call('GET', `/api/v1/app/${appId}/msg/${fresh.json.id}`)).status, 200);
      // The list, from the paused replica, has the old message and not the new one: within the bound, it lags.
      const list = await listed();
      assert.ok(list.includes(before));
      assert.equal(list.includes(fresh.json.id), false, 'the list was served by the replica');
      assert.equal(await metric('tidings_read_replica_fallback_total'), fallbacksBefore, 'no read fell back');
      const app = `/api/v1/app/${appId}`;
      for (const path of [`${app}/endpoint`, `${app}/attempt/endpoint/${endpointId}`, '/api/v1/stats/overview']) {
        assert.equal((await call('GET', path)).status, 200, path);
      }
    },
  );

  test(
    'past TIDINGS_READ_MAX_LAG the lists go to the primary, counted as lagging, and back to the replica once it ' +
      'caught up',
    async () => {
      const fresh = await publish(3);
      const shown = async (): Promise<boolean> => (await listed()).includes(fresh.json.id);
      await until(shown, MAX_LAG_MS + WAIT_MS, 'the list from the primary');
      assert.ok((await lagging()) >= 1);
      assert.ok((await lagMs()) > MAX_LAG_MS);
      assert.equal(logs.lines.filter((l) => l.msg === LAGGING_LINE).length, 1, 'said once');
      await onReplica('SELECT pg_wal_replay_resume()');
      await until(async () => (await lagMs()) < MAX_LAG_MS / 2, WAIT_MS, 'the replica fresh again');
      const counted = await lagging();
      await listed();
      assert.equal(await lagging(), counted, 'served by the replica again');
    },
  );

  test(
    'the replica stopped: reads fall back to the primary and none fails; started again, it serves the lists ' + 'again',
    async () => {
      await replica.stop('fast');
      const fresh = await publish(4);
      const app = `/api/v1/app/${appId}`;
      for (const path of [`${app}/endpoint`, '/api/v1/stats/overview', `${app}/endpoint/${endpointId}/msg`]) {
        assert.equal((await call('GET', path)).status, 200, path);
      }
      assert.ok((await listed()).includes(fresh.json.id));
      assert.ok((await metric('tidings_read_replica_fallback_total', { reason: 'unavailable' })) >= 1);
      await until(async () => (await metric('tidings_read_replica_up')) === 0, WAIT_MS, 'the replica seen down');
      await replica.start();
      const serving = async (): Promise<boolean> =>
        (await metric('tidings_read_replica_up')) === 1 && (await lagMs()) < MAX_LAG_MS / 2;
      await until(serving, WAIT_MS, 'the replica serving again');
      await caughtUp();
      await pauseReplay();
      const unseen = await publish(5);
      assert.equal((await listed()).includes(unseen.json.id), false, 'the list comes from the replica again');
      await onReplica('SELECT pg_wal_replay_resume()');
      assert.deepEqual(
        logs.lines.filter((l) => Number(l.level) >= 50),
        [],
        'no error logged',
      );
    },
  );
});
