import pg from 'pg';
import { newId } from '../src/domain/ids.ts';

/**
 * The delivery log the `search` scenario reads (docs/guides/benchmark.md): one application with `messages` messages
 * published evenly over the `spanMs` before `ref`, each delivered to two endpoints, inserted by SQL
 * (`generate_series`) in batches of {@link BATCH} messages, so that each statement is bounded.
 *
 * - Messages: ids made in SQL as the API makes them (ULID: the publish instant in ms, then 16 characters; here the
 *   message number in hex), ten event types (`order.0` … `order.9`), channel `eu` or `us` (every other one), tag
 *   `vip` on one in seven, a JSON payload `{"customer":{"id":"cus_<n mod 1000>"},"total":…,"pad":"xx…"}` of about
 *   `payloadBytes` bytes. Payloads are stored under the plaintext key id (encryption at rest off for them), so a
 *   payload search here leaves out one AES-GCM decryption per payload read.
 * - Deliveries to endpoint A: one in 100 dead (`exhausted`, two attempts answered 500), one in 100 pending after a
 *   503 (`retry_scheduled`, due in an hour), one in 100 skipped (`endpoint_disabled`, no attempt), the rest
 *   succeeded (one attempt, 200). To endpoint B: one in 200 dead after a 404 (`gone`), the rest succeeded.
 * - Attempts: one row per attempt made (about 2,020,000 per 1,000,000 messages), ids ULIDs of the attempt's instant.
 * - Timeline: one row per delivery, its latest (the one a search shows as `reason`), not the three or more a
 *   delivery gets in production: a search reads one row per delivery on its page, by index.
 */

/** Messages per statement. */
const BATCH = 100_000;

/** What {@link fillSearchLog} made. */
export interface SearchLog {
  readonly appId: string;
  /** Endpoint A (failures, skips) and endpoint B. */
  readonly endpointA: string;
  readonly endpointB: string;
  /** The instants of the first and the last message. */
  readonly from: Date;
  readonly to: Date;
  readonly rows: Readonly<Record<string, number>>;
}

/** The ULID time part of `t` (ms) in SQL, Crockford base 32, 10 characters. */
const ULID_TIME_FN = `CREATE OR REPLACE FUNCTION pg_temp.ulid_time(t bigint) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT string_agg(substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', ((t >> (5 * (9 - i))) & 31)::int + 1, 1), '' ORDER BY i)
  FROM generate_series(0, 9) i $$`;

/** Message numbers lo … hi − 1 with their ids and instants: $2 lo, $3 hi, $4 count, $5 first ms, $6 span ms. */
const SERIES = `generate_series($2::bigint, $3::bigint - 1) m
CROSS JOIN LATERAL (SELECT $5::bigint + (m * $6::bigint) / greatest($4::bigint - 1, 1) AS ms) t
CROSS JOIN LATERAL (SELECT 'msg_' || pg_temp.ulid_time(t.ms) || lpad(upper(to_hex(m)), 16, '0') AS id,
                           to_timestamp(t.ms / 1000.0) AS created_at) msg`;

/** Messages lo … hi − 1 of application $1 ({@link SERIES}), padded with $7 bytes. */
const INSERT_MESSAGES = `
INSERT INTO messages (id, app_id, event_type, channels, tags, payload, payload_key_id, created_at)
SELECT msg.id, $1, 'order.' || (m % 10),
       ARRAY[CASE WHEN m % 2 = 0 THEN 'eu' ELSE 'us' END], CASE WHEN m % 7 = 0 THEN ARRAY['vip'] END,
       convert_to('{"customer":{"id":"cus_' || (m % 1000) || '"},"total":' || (m % 500) || ',"pad":"'
                  || repeat('x', $7::int) || '"}', 'UTF8'),
       'plain', msg.created_at
FROM ${SERIES}`;

/** Deliveries of the messages lo … hi − 1 ({@link SERIES}) to endpoint A ($7, b = 0) and B ($8, b = 1). */
const INSERT_DELIVERIES = `
INSERT INTO deliveries (app_id, message_id, endpoint_id, state, next_attempt_at, attempt_count, last_status_code,
                        last_error_kind, last_attempt_at, dead_reason, created_at)
SELECT $1, msg.id, e.ep, s.state,
       CASE WHEN s.state = 'pending' THEN now() + interval '1 hour' ELSE msg.created_at END,
       s.attempts, s.status, CASE WHEN s.status >= 300 THEN 'http_status' END,
       CASE WHEN s.attempts > 0 THEN msg.created_at + s.attempts * interval '50 ms' END, s.dead, msg.created_at
FROM ${SERIES}
CROSS JOIN LATERAL (VALUES ($7::text, 0), ($8::text, 1)) e(ep, b)
CROSS JOIN LATERAL (SELECT
  CASE WHEN e.b = 0 AND m % 100 = 0 THEN 'dead' WHEN e.b = 0 AND m % 100 = 1 THEN 'pending'
       WHEN e.b = 0 AND m % 100 = 2 THEN 'skipped' WHEN e.b = 1 AND m % 200 = 5 THEN 'dead' ELSE 'succeeded' END
    AS state) v
CROSS JOIN LATERAL (SELECT v.state,
  CASE WHEN v.state = 'dead' AND e.b = 0 THEN 2 WHEN v.state = 'skipped' THEN 0 ELSE 1 END AS attempts,
  CASE WHEN v.state = 'skipped' THEN NULL WHEN v.state = 'pending' THEN 503
       WHEN v.state = 'dead' THEN CASE WHEN e.b = 0 THEN 500 ELSE 404 END ELSE 200 END AS status,
  CASE WHEN v.state = 'dead' THEN CASE WHEN e.b = 0 THEN 'exhausted' ELSE 'gone' END END AS dead) s`;

/** The attempts and the latest timeline row of the deliveries with ids above $1 (those the batch made). */
const INSERT_ATTEMPTS = `
INSERT INTO attempts (id, delivery_id, app_id, message_id, endpoint_id, attempt_number, trigger, succeeded,
                      response_status_code, url, duration_ms, dispatcher_id, fencing_token, created_at)
SELECT 'atmpt_' || pg_temp.ulid_time((extract(epoch FROM d.created_at) * 1000)::bigint + 50 * k)
         || lpad(upper(to_hex(d.id * 4 + k)), 16, '0'),
       d.id, d.app_id, d.message_id, d.endpoint_id, k, 'scheduled', d.last_status_code < 300,
       CASE WHEN k < d.attempt_count AND d.state = 'dead' THEN 500 ELSE d.last_status_code END,
       'http://127.0.0.1:9/bench', 20 + (d.id % 80)::int, 'bench', k, d.created_at + k * interval '50 ms'
FROM deliveries d CROSS JOIN LATERAL generate_series(1, d.attempt_count) k
WHERE d.id > $1`;

const INSERT_TIMELINE = `
INSERT INTO delivery_events (delivery_id, state, status_code, reason, at, app_id, endpoint_id, since_publish_ms)
SELECT d.id, d.state, d.last_status_code,
       CASE d.state WHEN 'dead' THEN d.dead_reason WHEN 'pending' THEN 'retry_scheduled'
                    WHEN 'skipped' THEN 'endpoint_disabled' END,
       d.created_at + d.attempt_count * interval '50 ms', d.app_id, d.endpoint_id, 50 * d.attempt_count
FROM deliveries d WHERE d.id > $1`;

/** The bytes of `"pad":"…"` that bring a payload to about `payloadBytes`. */
const padFor = (payloadBytes: number): number => Math.max(0, payloadBytes - 60);

/**
 * Fills the (migrated, empty) database of `client` as described above; `log` gets one line per batch.
 * Returns what it made, with the row counts of each table.
 */
export async function fillSearchLog(
  client: pg.Client,
  o: { messages: number; spanMs: number; ref: Date; payloadBytes: number },
  log: (line: string) => void,
): Promise<SearchLog> {
  const now = o.ref.getTime();
  const appId = newId('app', now - o.spanMs - 60_000, Math.random);
  const endpointA = newId('ep', now - o.spanMs - 50_000, Math.random);
  const endpointB = newId('ep', now - o.spanMs - 40_000, Math.random);
  await client.query(ULID_TIME_FN);
  await client.query(`INSERT INTO applications (id, name) VALUES ($1, 'search bench')`, [appId]);
  for (const [ep, path] of [
    [endpointA, 'a'],
    [endpointB, 'b'],
  ] as const) {
    await client.query(
      `INSERT INTO endpoints (id, app_id, url, secret, secret_key_id) VALUES ($1, $2, $3, '\\x00', 'plain')`,
      [ep, appId, `http://127.0.0.1:9/${path}`],
    );
  }
  const first = now - o.spanMs;
  for (let lo = 0; lo < o.messages; lo += BATCH) {
    const hi = Math.min(o.messages, lo + BATCH);
    const t0 = performance.now();
    await client.query('BEGIN');
    const series = [appId, lo, hi, o.messages, first, o.spanMs];
    await client.query(INSERT_MESSAGES, [...series, padFor(o.payloadBytes)]);
    const before = (await client.query<{ n: string }>('SELECT coalesce(max(id), 0) AS n FROM deliveries')).rows[0]!.n;
    await client.query(INSERT_DELIVERIES, [...series, endpointA, endpointB]);
    await client.query(INSERT_ATTEMPTS, [before]);
    await client.query(INSERT_TIMELINE, [before]);
    await client.query('COMMIT');
    log(
      `  search fill: messages ${lo.toLocaleString('en-US')}–${hi.toLocaleString('en-US')} in ${Math.round(
        performance.now() - t0,
      )} ms`,
    );
  }
  await client.query('VACUUM ANALYZE messages, deliveries, attempts, delivery_events');
  const rows: Record<string, number> = {};
  for (const table of ['messages', 'deliveries', 'attempts', 'delivery_events']) {
    rows[table] = Number((await client.query<{ n: string }>(`SELECT count(*) AS n FROM ${table}`)).rows[0]!.n);
  }
  return { appId, endpointA, endpointB, from: new Date(first), to: new Date(first + o.spanMs), rows };
}
