import type { Ordering } from '../../../ports/paging.ts';
import type { AttemptFilters, DeliveryFilters, MessageFilters, ScanBounds } from '../../../ports/search-store.ts';
import { holdColumnsSql } from '../delivery-holds.ts';
import { nowSql } from '../sql.ts';

/**
 * The statements of the delivery-log search (./search-store.ts; docs/reference/api.md, "Search"). Every scan has
 * the same shape, so that its cost is bounded whatever its filters:
 *
 *   SELECT …, <filters> AS matched FROM (
 *     SELECT …, row_number() OVER (ORDER BY key) AS n FROM <index range> ORDER BY key LIMIT <scan rows>
 *   ) c … WHERE <filters> OR c.n = <scan rows> ORDER BY key LIMIT <take>
 *
 * The inner query reads one range of an index in its order, at most `scanRows` rows, with no filter but the
 * range (a filter there would let a selective search read the whole range); the filters choose among those rows.
 * Other rows (a delivery's message, its endpoint) are read by key, in a lateral subquery behind a fence
 * (`OFFSET 0`), so that no plan reads a whole table to join them (test/integration/search-plan.test.ts).
 * The row that ends the scan budget (`n = scanRows`) is returned even when it does not match, so that the caller
 * knows where the scan stopped. Values are always parameters; only the order (ASC / DESC) and which optional
 * pieces are present change the text.
 */

/** Numbered parameters of one statement: `p(value)` appends a value and returns its `$n`. */
export class Params {
  readonly values: unknown[] = [];
  p(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }
}

/** A statement and its parameters. */
export interface Statement {
  readonly text: string;
  readonly values: readonly unknown[];
}

const dir = (order: Ordering): string => (order === 'descending' ? 'DESC' : 'ASC');
const beyond = (order: Ordering): string => (order === 'descending' ? '<' : '>');

/**
 * The range condition on `column`, narrowed by the resume key `after` (in scan order): `column > lo AND column < hi`,
 * both index conditions. `after` replaces the bound it is tighter than (byte order, as the ids compare).
 */
export function rangeSql(q: Params, column: string, scan: ScanBounds, after: string | null): string {
  let { above, below } = scan.range;
  if (after !== null && scan.order === 'descending' && after < below) below = after;
  if (after !== null && scan.order === 'ascending' && after > above) above = after;
  return `${column} > ${q.p(above)} AND ${column} < ${q.p(below)}`;
}

/** The message filters on alias `m` (its columns event_type, channels, tags). */
function messageMatch(q: Params, f: MessageFilters, m: string): string[] {
  const out: string[] = [];
  if (f.eventTypes !== null) out.push(`${m}.event_type = ANY (${q.p(f.eventTypes)}::text[])`);
  if (f.channel !== null) out.push(`${q.p(f.channel)}::text = ANY (${m}.channels)`);
  if (f.tag !== null) out.push(`${q.p(f.tag)}::text = ANY (${m}.tags)`);
  return out;
}

/** A status class on `column`: 0 = no HTTP status, else [class, class + 100). */
function statusClass(q: Params, column: string, cls: number | null): string[] {
  if (cls === null) return [];
  if (cls === 0) return [`${column} IS NULL`];
  const p = q.p(cls);
  return [`${column} >= ${p}::int AND ${column} < ${p}::int + 100`];
}

/** An exact HTTP status on `column`. */
function statusExact(q: Params, column: string, code: number | null): string[] {
  return code === null ? [] : [`${column} = ${q.p(code)}::int`];
}

const all = (conditions: readonly string[]): string =>
  conditions.length === 0 ? 'TRUE' : conditions.map((c) => `(${c})`).join(' AND ');

/** The message columns a scan returns (never the payload), on alias `m`. */
const MESSAGE_COLUMNS = (m: string) => `${m}.id AS message_id, ${m}.app_id, ${m}.event_id, ${m}.event_type,
  ${m}.channels, ${m}.tags, (${m}.payload_expunged_at IS NOT NULL OR ${m}.payload IS NULL) AS expunged,
  ${m}.content_type, ${m}.deliver_at, ${m}.created_at`;

/** The delivery columns a scan returns, on alias `d`. */
const DELIVERY_COLUMNS = `d.id AS delivery_id, d.endpoint_id, d.state, d.attempt_count, d.last_status_code,
  d.last_error_kind, d.last_attempt_at,
  CASE WHEN d.state = 'pending' AND d.next_attempt_at <> 'infinity'::timestamptz THEN d.next_attempt_at END
    AS next_attempt`;

/**
 * SCAN_MESSAGES — messages of an application whose ids lie in the window, in id order, at most `scanRows` of them
 * examined (index messages_app_created (app_id, id): one range scan). Returns the matching ones and the last one
 * examined (`n`), at most `take` rows.
 */
export function scanMessagesSql(appId: string, scan: ScanBounds, filters: MessageFilters): Statement {
  const q = new Params();
  const o = dir(scan.order);
  const app = q.p(appId);
  const range = rangeSql(q, 'm.id', scan, scan.after);
  const scanRows = q.p(scan.scanRows);
  const matched = all(messageMatch(q, filters, 'c'));
  const text = `SELECT c.*, ${matched} AS matched FROM (
  SELECT ${MESSAGE_COLUMNS('m')}, row_number() OVER (ORDER BY m.id ${o} ROWS UNBOUNDED PRECEDING) AS n
  FROM messages m WHERE m.app_id = ${app} AND ${range}
  ORDER BY m.id ${o} LIMIT ${scanRows}
) c
WHERE ${matched} OR c.n = ${scanRows}
ORDER BY c.message_id ${o} LIMIT ${q.p(scan.take)}`;
  return { text, values: q.values };
}

/** The delivery filters on aliases `d` (the delivery) and `m` (its message's columns). */
function deliveryMatch(q: Params, f: DeliveryFilters, m: string): string {
  return all([
    ...(f.states === null ? [] : [`d.state = ANY (${q.p(f.states)}::text[])`]),
    ...statusClass(q, 'd.last_status_code', f.statusCodeClass),
    ...statusExact(q, 'd.last_status_code', f.statusCode),
    ...messageMatch(q, f, m),
  ]);
}

/**
 * SCAN_ENDPOINT_DELIVERIES — the deliveries of one endpoint whose messages' ids lie in the window, in message id
 * order: the ones not leased by deliveries_endpoint_message (endpoint_id, message_id) (one range scan, at most
 * `scanRows`), the leased ones by deliveries_endpoint_leased (at most what the dispatchers' windows hold, read
 * whole behind a fence, as ../delivery-reads.ts does); merged, at most `scanRows` examined; each with its message by
 * its key. The application is checked on every row (an endpoint named by id may be another application's).
 */
export function scanEndpointDeliveriesSql(
  appId: string,
  endpointId: string,
  scan: ScanBounds,
  filters: DeliveryFilters,
): Statement {
  const q = new Params();
  const o = dir(scan.order);
  const app = q.p(appId);
  const ep = q.p(endpointId);
  const range = rangeSql(q, 'message_id', scan, scan.after);
  const scanRows = q.p(scan.scanRows);
  const matched = deliveryMatch(q, filters, 'm');
  // The endpoint is the application's (checked once, before any delivery is read), and so is every row.
  const owned = `EXISTS (SELECT 1 FROM endpoints WHERE id = ${ep} AND app_id = ${app})`;
  const text = `SELECT ${MESSAGE_COLUMNS('m')}, ${DELIVERY_COLUMNS}, d.n, ${matched} AS matched FROM (
  SELECT d.*, row_number() OVER (ORDER BY d.message_id ${o} ROWS UNBOUNDED PRECEDING) AS n FROM (
    (SELECT * FROM deliveries
     WHERE endpoint_id = ${ep} AND state <> 'leased' AND ${range} AND app_id = ${app} AND ${owned}
     ORDER BY message_id ${o} LIMIT ${scanRows})
    UNION ALL
    (SELECT * FROM deliveries
     WHERE endpoint_id = ${ep} AND state = 'leased' AND ${range} AND app_id = ${app} AND ${owned} OFFSET 0)
  ) d
  ORDER BY d.message_id ${o} LIMIT ${scanRows}
) d
CROSS JOIN LATERAL (SELECT * FROM messages m WHERE m.id = d.message_id OFFSET 0) m
WHERE ${matched} OR d.n = ${scanRows}
ORDER BY d.message_id ${o} LIMIT ${q.p(scan.take)}`;
  return { text, values: q.values };
}

/** A key of the every-endpoint scan: `<message id>.<endpoint id>`, or a message id alone (one with no delivery). */
export function splitDeliveryKey(key: string): { readonly messageId: string; readonly endpointId: string | null } {
  const dot = key.indexOf('.');
  if (dot < 0) return { messageId: key, endpointId: null };
  return { messageId: key.slice(0, dot), endpointId: key.slice(dot + 1) };
}

/**
 * SCAN_APP_DELIVERIES — the deliveries to every endpoint of an application for messages whose ids lie in the
 * window: the messages by messages_app_created (app_id, id) in id order, at most `scanRows` of them examined, each
 * message's deliveries by the unique index (message_id, endpoint_id), in (message id, endpoint id) order. A resume
 * key inside a message (`<message>.<endpoint>`) takes that message again, from the endpoint after the key.
 */
export function scanAppDeliveriesSql(appId: string, scan: ScanBounds, filters: DeliveryFilters): Statement {
  const q = new Params();
  const o = dir(scan.order);
  const app = q.p(appId);
  const resume = scan.after === null ? null : splitDeliveryKey(scan.after);
  let range: string;
  let within = '';
  if (resume === null || resume.endpointId === null) {
    range = rangeSql(q, 'm.id', scan, resume?.messageId ?? null);
  } else {
    // Inclusive of the resume message; its deliveries continue after the resume endpoint.
    const down = scan.order === 'descending';
    const [lo, hi] = down ? [scan.range.above, resume.messageId] : [resume.messageId, scan.range.below];
    range = down ? `m.id > ${q.p(lo)} AND m.id <= ${q.p(hi)}` : `m.id >= ${q.p(lo)} AND m.id < ${q.p(hi)}`;
    const message = q.p(resume.messageId);
    within = ` AND (d.message_id <> ${message} OR d.endpoint_id ${beyond(scan.order)} ${q.p(resume.endpointId)})`;
  }
  const scanRows = q.p(scan.scanRows);
  const matched = deliveryMatch(q, filters, 'c');
  const text = `SELECT c.*, ${DELIVERY_COLUMNS}, d.id IS NOT NULL AND ${matched} AS matched FROM (
  SELECT ${MESSAGE_COLUMNS('m')}, row_number() OVER (ORDER BY m.id ${o} ROWS UNBOUNDED PRECEDING) AS n
  FROM messages m WHERE m.app_id = ${app} AND ${range}
  ORDER BY m.id ${o} LIMIT ${scanRows}
) c
LEFT JOIN LATERAL (
  SELECT * FROM deliveries d WHERE d.message_id = c.message_id AND d.app_id = ${app}${within}
) d ON TRUE
WHERE (d.id IS NOT NULL AND ${matched}) OR c.n = ${scanRows}
ORDER BY c.message_id ${o}, d.endpoint_id ${o} NULLS LAST LIMIT ${q.p(scan.take)}`;
  return { text, values: q.values };
}

/**
 * DESCRIBE_DELIVERIES — for the deliveries of one page (by primary key): the reason and instant of each one's latest
 * timeline row (delivery_events_delivery (delivery_id, id), one row each) and its hold by its endpoint
 * (../delivery-holds.ts) at `now`.
 */
export function describeDeliveriesSql(appId: string, deliveryIds: readonly string[], now: Date | null): Statement {
  const q = new Params();
  const ids = q.p(deliveryIds);
  const app = q.p(appId);
  q.p(now);
  const text = `SELECT d.id AS delivery_id, ev.reason, ev.at, ${holdColumnsSql(nowSql(q.values.length))}
FROM deliveries d
CROSS JOIN LATERAL (SELECT * FROM endpoints e WHERE e.id = d.endpoint_id OFFSET 0) e
LEFT JOIN LATERAL (SELECT reason, at FROM delivery_events WHERE delivery_id = d.id ORDER BY id DESC LIMIT 1) ev ON TRUE
WHERE d.id = ANY (${ids}::bigint[]) AND d.app_id = ${app}`;
  return { text, values: q.values };
}

/**
 * SCAN_ATTEMPTS — the attempts to one endpoint whose ids lie in the window, in id order, at most `scanRows`
 * examined (index attempts_endpoint (endpoint_id, id): one range scan), each with its message by its key. The
 * application is checked on every row (an endpoint named by id may be another application's). Response bodies
 * are not read.
 */
export function scanAttemptsSql(
  appId: string,
  endpointId: string,
  scan: ScanBounds,
  filters: AttemptFilters,
): Statement {
  const q = new Params();
  const o = dir(scan.order);
  const app = q.p(appId);
  const ep = q.p(endpointId);
  const range = rangeSql(q, 'a.id', scan, scan.after);
  const scanRows = q.p(scan.scanRows);
  const matched = all([
    ...(filters.succeeded === null ? [] : [`c.succeeded = ${q.p(filters.succeeded)}::boolean`]),
    ...statusClass(q, 'c.response_status_code', filters.statusCodeClass),
    ...statusExact(q, 'c.response_status_code', filters.statusCode),
    ...messageMatch(q, filters, 'm'),
  ]);
  const text = `SELECT c.*, m.event_id, m.event_type, m.channels, m.tags, m.created_at AS msg_created_at,
       ${matched} AS matched FROM (
  SELECT a.id, a.message_id, a.endpoint_id, a.attempt_number, a.trigger, a.succeeded, a.url, a.response_status_code,
         a.error_kind, a.error_detail, a.duration_ms, a.created_at,
         row_number() OVER (ORDER BY a.id ${o} ROWS UNBOUNDED PRECEDING) AS n
  FROM attempts a WHERE a.endpoint_id = ${ep} AND ${range} AND a.app_id = ${app}
    AND EXISTS (SELECT 1 FROM endpoints WHERE id = ${ep} AND app_id = ${app})
  ORDER BY a.id ${o} LIMIT ${scanRows}
) c
CROSS JOIN LATERAL (SELECT * FROM messages m WHERE m.id = c.message_id OFFSET 0) m
WHERE ${matched} OR c.n = ${scanRows}
ORDER BY c.id ${o} LIMIT ${q.p(scan.take)}`;
  return { text, values: q.values };
}
