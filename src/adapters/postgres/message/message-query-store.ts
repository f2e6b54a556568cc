import type { Cipher } from '../../../ports/cipher.ts';
import type {
  AttemptListQuery,
  AttemptView,
  MessageQueryStore,
  MessageView,
} from '../../../ports/message-query-store.ts';
import {
  addMessageFilters,
  type AttemptColumns,
  attemptViewOf,
  Conditions,
  messageViewOf,
  payloadOf,
  type StoredMessageColumns,
} from '../message-rows.ts';
import { keyset, toPage } from '../paging.ts';
import { on } from '../sql.ts';
import type { Db } from '../db.ts';

type MessageRow = StoredMessageColumns;

interface AttemptRow extends AttemptColumns {
  response_body: Buffer | null;
  response_body_key_id: string | null;
  operator_detail: Record<string, unknown> | null;
}

/** Message columns; the payload column is read only when wanted (else NULL, and nothing is decrypted). */
const messageColumns = (withPayload: boolean) =>
  `id, app_id, event_id, event_type, channels, tags, ${withPayload ? 'payload' : 'NULL::bytea AS payload'}, ` +
  'payload_key_id, (payload_expunged_at IS NOT NULL OR payload IS NULL) AS expunged, content_type, deliver_at, ' +
  'created_at';

/** Attempt columns; the response body is read only when wanted (else NULL, and nothing is decrypted). */
const attemptColumns = (
  withBody: boolean,
) => `a.id, a.message_id, a.endpoint_id, a.attempt_number, a.trigger, a.succeeded, a.url, a.response_status_code,
  ${withBody ? 'a.response_body' : 'NULL::bytea AS response_body'}, a.response_body_key_id, a.operator_detail,
  a.error_kind, a.error_detail, a.duration_ms, a.created_at,
  m.event_id, m.event_type, m.channels, m.tags, m.created_at AS msg_created_at`;

function attemptView(cipher: Cipher, row: AttemptRow): AttemptView {
  // A NULL key id with a body present: written before response bodies were encrypted (plain UTF-8).
  const body =
    row.response_body === null
      ? null
      : row.response_body_key_id === null
        ? row.response_body
        : cipher.decrypt(row.response_body_key_id, row.response_body, row.id);
  return attemptViewOf(row, {
    responseBody: body === null ? null : body.toString('utf8'),
    operatorDetail: row.operator_detail,
  });
}

/** Adds the Svix attempt filters of `query` (status, status code class, message fields, time window). */
function attemptFilters(c: Conditions, query: AttemptListQuery): void {
  if (query.messageId !== null) c.add((p) => `a.message_id = ${p}`, query.messageId);
  if (query.endpointId !== null) c.add((p) => `a.endpoint_id = ${p}`, query.endpointId);
  if (query.status !== null) {
    // Recorded attempts are final: 0 = succeeded, 2 = failed; pending/sending/canceled match none.
    if (query.status === 0 || query.status === 2) c.add((p) => `a.succeeded = ${p}`, query.status === 0);
    else c.sql.push('FALSE');
  }
  if (query.statusCodeClass !== null) {
    if (query.statusCodeClass === 0) c.sql.push('a.response_status_code IS NULL');
    else
      c.add(
        (p) => `a.response_status_code >= ${p}::int AND a.response_status_code < ${p}::int + 100`,
        query.statusCodeClass,
      );
  }
  // At the millisecond precision the API shows, so an item's own timestamp is not "after" itself.
  addMessageFilters(c, query, 'm.', `date_trunc('milliseconds', a.created_at)`);
}

/**
 * The PostgreSQL {@link MessageQueryStore}: the read side of messages and their attempts.
 * Payloads are decrypted with `cipher` (context = message id; a NULL key id means stored in plain text).
 * The lists run on `reader` (a read replica while it is fresh enough, docs/adr/0022-poolers-and-read-replicas.md;
 * default `db`); a look-up by id runs on `db`, so that it sees what the request or the one before it wrote.
 */
export function createPgMessageQueryStore(db: Db, cipher: Cipher, reader: Db = db): MessageQueryStore {
  const messageView = (row: MessageRow): MessageView => messageViewOf(row, payloadOf(cipher, row, row.id));

  return {
    async findMessage(appId, ref, options) {
      const res = await on(db, options.tx).query<MessageRow>(
        `SELECT ${messageColumns(options.withPayload)} FROM messages WHERE app_id = $1 AND (id = $2 OR ` +
          'event_id = $2) ORDER BY (id = $2) DESC LIMIT 1',
        [appId, ref],
      );
      return res.rows[0] === undefined ? null : messageView(res.rows[0]);
    },

    async listMessages(appId, query) {
      const c = new Conditions([appId]);
      addMessageFilters(c, query, '', `date_trunc('milliseconds', created_at)`);
      const k = keyset(query, 'id', c.next + 1);
      const limitParam = c.next;
      const res = await reader.query<MessageRow>(
        `SELECT ${messageColumns(query.withPayload)} FROM messages
          WHERE app_id = $1 ${c.sql.map((s) => `AND ${s}`).join(' ')} AND ${k.where}
         ORDER BY ${k.orderBy} LIMIT $${limitParam}`,
        [...c.params, k.fetch, ...k.params],
      );
      return toPage(res.rows, query, (r) => r.id, messageView);
    },

    async readPayloads(appId, ids, budgetBytes) {
      // A running sum of the stored sizes (octet_length reads a TOASTed value's size, not the value), so rows
      // past the budget are filtered out before any payload is fetched.
      const res = await reader.query<Pick<MessageRow, 'id' | 'payload' | 'payload_key_id' | 'expunged'>>(
        `SELECT id, payload, payload_key_id, expunged FROM (
           SELECT m.id, m.payload, m.payload_key_id,
             (m.payload_expunged_at IS NOT NULL OR m.payload IS NULL) AS expunged,
                  u.ord, coalesce(sum(octet_length(m.payload))
                    OVER (ORDER BY u.ord ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS read_before
           FROM unnest($2::text[]) WITH ORDINALITY AS u(id, ord) JOIN messages m ON m.app_id = $1 AND m.id = u.id
         ) page WHERE read_before < $3 ORDER BY ord`,
        [appId, ids, budgetBytes],
      );
      return res.rows.map((row) => ({
        id: row.id,
        payload: payloadOf(cipher, row, row.id),
      }));
    },

    async listAttempts(appId, query) {
      const c = new Conditions([appId]);
      attemptFilters(c, query);
      const k = keyset(query, 'a.id', c.next + 1);
      const limitParam = c.next;
      const res = await reader.query<AttemptRow>(
        `SELECT ${attemptColumns(query.withContent)} FROM attempts a JOIN messages m ON m.id = a.message_id
         WHERE a.app_id = $1 ${c.sql.map((s) => `AND ${s}`).join(' ')} AND ${k.where}
         ORDER BY ${k.orderBy} LIMIT $${limitParam}`,
        [...c.params, k.fetch, ...k.params],
      );
      return toPage(
        res.rows,
        query,
        (r) => r.id,
        (r) => attemptView(cipher, r),
      );
    },

    async findAttempt(appId, messageId, attemptId) {
      const res = await db.query<AttemptRow>(
        `SELECT ${attemptColumns(true)} FROM attempts a JOIN messages m ON m.id = a.message_id WHERE a.app_id ` +
          '= $1 AND a.message_id = $2 AND a.id = $3',
        [appId, messageId, attemptId],
      );
      return res.rows[0] === undefined ? null : attemptView(cipher, res.rows[0]);
    },
  };
}
