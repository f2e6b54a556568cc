import type { DeliveryState } from '../../../domain/delivery-state.ts';
import type { HoldKind } from '../../../ports/delivery-query-store.ts';
import type { AttemptView, MessageView } from '../../../ports/message-query-store.ts';
import type { DeliveryHit, ScanBounds, Scanned, SearchStore } from '../../../ports/search-store.ts';
import type { Db } from '../db.ts';
import { type AttemptColumns, attemptViewOf, type MessageColumns, messageViewOf } from '../message-rows.ts';
import {
  describeDeliveriesSql,
  scanAppDeliveriesSql,
  scanAttemptsSql,
  scanEndpointDeliveriesSql,
  scanMessagesSql,
  type Statement,
} from './search-sql.ts';

/** What every scan row carries: its place in the scan and whether it matched the filters. */
interface ScanColumns {
  n: string;
  matched: boolean;
}

/** {@link MessageColumns} as a scan names them: the message's id as `message_id`. */
interface MessageRowColumns extends Omit<MessageColumns, 'id'> {
  message_id: string;
}

interface DeliveryColumns {
  delivery_id: string | null;
  endpoint_id: string | null;
  state: DeliveryState | null;
  attempt_count: number | null;
  last_status_code: number | null;
  last_error_kind: string | null;
  last_attempt_at: Date | null;
  next_attempt: Date | null;
}

interface AttemptRow extends AttemptColumns, ScanColumns {}

/** A message as a scan reads it: never its payload (`payload` null; the use case reads it when it must). */
const messageOf = (r: MessageRowColumns): MessageView => messageViewOf({ ...r, id: r.message_id }, null);

/**
 * The rows of a scan as {@link Scanned}: the matching ones, and where the scan stopped when it ended at its scan
 * budget (a row numbered `scanRows`) or at `take` rows before the range's end.
 */
function scanned<R extends ScanColumns, T>(
  rows: readonly R[],
  scan: ScanBounds,
  keyOf: (row: R) => string,
  map: (row: R) => T,
): Scanned<T> {
  const last = rows[rows.length - 1];
  const stopped = last !== undefined && (rows.length >= scan.take || rows.some((r) => Number(r.n) >= scan.scanRows));
  return {
    items: rows.filter((r) => r.matched).map((r) => ({ key: keyOf(r), value: map(r) })),
    stoppedAt: stopped ? keyOf(last) : null,
  };
}

/**
 * The PostgreSQL {@link SearchStore} (./search-sql.ts has the statements, the index each reads and why a scan's
 * cost is bounded). Every statement runs on `reader` (a read replica while it is fresh enough,
 * docs/adr/0022-poolers-and-read-replicas.md; default `db`): a search never needs to see the request's own writes.
 */
export function createPgSearchStore(db: Db, reader: Db = db): SearchStore {
  const run = async <R extends object>(s: Statement) => (await reader.query<R>(s.text, [...s.values])).rows;

  const deliveryOf = (r: MessageRowColumns & DeliveryColumns): DeliveryHit => ({
    deliveryId: r.delivery_id ?? '',
    message: messageOf(r),
    endpointId: r.endpoint_id ?? '',
    state: r.state ?? 'pending',
    attemptCount: r.attempt_count ?? 0,
    lastStatusCode: r.last_status_code,
    lastErrorKind: r.last_error_kind,
    lastAttemptAt: r.last_attempt_at,
    nextAttemptAt: r.next_attempt,
  });

  return {
    async scanMessages(appId, scan, filters) {
      const rows = await run<MessageRowColumns & ScanColumns>(scanMessagesSql(appId, scan, filters));
      return scanned(rows, scan, (r) => r.message_id, messageOf);
    },

    async scanDeliveries(appId, endpointId, scan, filters) {
      type Row = MessageRowColumns & DeliveryColumns & ScanColumns;
      if (endpointId !== null) {
        const rows = await run<Row>(scanEndpointDeliveriesSql(appId, endpointId, scan, filters));
        return scanned(rows, scan, (r) => r.message_id, deliveryOf);
      }
      const rows = await run<Row>(scanAppDeliveriesSql(appId, scan, filters));
      const key = (r: Row): string => (r.endpoint_id === null ? r.message_id : `${r.message_id}.${r.endpoint_id}`);
      return scanned(rows, scan, key, deliveryOf);
    },

    async describeDeliveries(appId, deliveryIds, now) {
      if (deliveryIds.length === 0) return [];
      type Row = {
        delivery_id: string;
        reason: string | null;
        at: Date | null;
        held_by: string | null;
        held_until: Date | null;
      };
      const rows = await run<Row>(describeDeliveriesSql(appId, deliveryIds, now));
      return rows.map((r) => ({
        deliveryId: r.delivery_id,
        reason: r.reason,
        stateChangedAt: r.at,
        heldBy: r.held_by as HoldKind | null,
        heldUntil: r.held_until,
      }));
    },

    async scanAttempts(appId, endpointId, scan, filters) {
      const rows = await run<AttemptRow>(scanAttemptsSql(appId, endpointId, scan, filters));
      return scanned(
        rows,
        scan,
        (r) => r.id,
        (r): AttemptView => attemptViewOf(r, { responseBody: null, operatorDetail: null }),
      );
    },
  };
}
