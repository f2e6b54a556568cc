/**
 * What the search tests (api-search.test.ts) build their worlds with: requests to the API, a reader that follows a
 * search's iterators to the end, and deliveries and attempts set as a dispatcher would leave them (no dispatcher
 * runs: a delivery is moved by SQL with the timeline row the dispatcher would write; an attempt's id carries the
 * manual clock's instant).
 */
import assert from 'node:assert/strict';
import { newId } from '../../src/domain/ids.ts';
import type { ManualClock } from '../support/manual-clock.ts';
import type { ApiHarness } from './api-harness.ts';

/** A list answer. */
export interface ListBody<T> {
  data: T[];
  iterator: string | null;
  prevIterator: string | null;
  done: boolean;
}

/** The fields of `DeliverySearchOut` the tests read. */
export interface Found {
  msgId: string;
  endpointId: string;
  deliveryState: string;
  status: number;
  reason: string | null;
  stateChangedAt: string | null;
  lastStatusCode: number | null;
  heldBy: string | null;
}

/** Pages one search may take in a test. */
const MAX_PAGES = 50;

/** The helpers of one test world over `api`, whose clock is `clock`. */
export function searchWorld(api: () => ApiHarness, clock: ManualClock, random: () => number) {
  const get = async <T>(path: string, token?: string): Promise<{ status: number; body: T }> => {
    const res = await api().request('GET', path, token === undefined ? {} : { token });
    return { status: res.status, body: (await res.json()) as T };
  };

  /** Every item of a search, following iterators until done; with the pages read and how many were empty. */
  const all = async <T>(path: string, token?: string): Promise<{ items: T[]; pages: number; emptyPages: number }> => {
    const items: T[] = [];
    let iterator: string | null = null;
    let emptyPages = 0;
    for (let pages = 1; pages <= MAX_PAGES; pages++) {
      const next = iterator === null ? '' : `&iterator=${encodeURIComponent(iterator)}`;
      const res: { status: number; body: ListBody<T> } = await get<ListBody<T>>(`${path}${next}`, token);
      assert.equal(res.status, 200, `${path}: ${JSON.stringify(res.body)}`);
      items.push(...res.body.data);
      if (res.body.data.length === 0) emptyPages++;
      if (res.body.done) return { items, pages, emptyPages };
      assert.notEqual(res.body.iterator, iterator, 'a page that is not done moves on');
      iterator = res.body.iterator;
    }
    assert.fail(`${path}: not done after ${MAX_PAGES} pages`);
  };

  const app = async (name: string) => api().svix.application.create({ name });

  /** An endpoint, a millisecond after the previous one (endpoint ids, and so their order, follow the clock). */
  const endpoint = async (appId: string, path: string) => {
    clock.advance(1);
    return api().svix.endpoint.create(appId, { url: `http://127.0.0.1:9/${path}` });
  };

  /** Publishes one message a second after the previous one (the clock moves first). */
  const publish = async (
    appId: string,
    eventType: string,
    payload: Record<string, unknown>,
    extra: { channels?: string[]; tags?: string[] } = {},
  ) => {
    clock.advance(1000);
    return api().svix.message.create(appId, { eventType, payload, ...extra });
  };

  /** Moves a delivery to `state` as a dispatcher would (last status, dead reason), with its timeline row. */
  const settle = async (
    msgId: string,
    endpointId: string,
    state: string,
    fields: { reason: string; status?: number },
  ) => {
    const db = api().database.db;
    const { rows } = await db.query<{ id: string }>(
      `UPDATE deliveries SET state = $3, dead_reason = CASE WHEN $3 = 'dead' THEN $4 END, last_status_code = $5,
              attempt_count = attempt_count + 1, last_attempt_at = $6,
              last_error_kind = CASE WHEN $5::int >= 300 THEN 'http_status' END
       WHERE message_id = $1 AND endpoint_id = $2 RETURNING id`,
      [msgId, endpointId, state, fields.reason, fields.status ?? null, clock.sqlNow()],
    );
    await db.query(
      'INSERT INTO delivery_events (delivery_id, state, status_code, reason, at) VALUES ($1, $2, $3, $4, $5)',
      [rows[0]!.id, state, fields.status ?? null, fields.reason, clock.sqlNow()],
    );
  };

  /** Records an attempt of a delivery at the clock's instant; returns its id. */
  const attempt = async (appId: string, msgId: string, endpointId: string, status: number) => {
    const db = api().database.db;
    const id = newId('atmpt', clock.nowMs(), random);
    const { rows } = await db.query<{ id: string }>(
      'SELECT id FROM deliveries WHERE message_id = $1 AND endpoint_id = $2',
      [msgId, endpointId],
    );
    await db.query(
      `INSERT INTO attempts (id, delivery_id, app_id, message_id, endpoint_id, attempt_number, trigger, succeeded,
                             response_status_code, url, duration_ms, dispatcher_id, fencing_token, created_at)
       VALUES ($1, $2, $3, $4, $5, 1, 'scheduled', $6, $7, 'http://127.0.0.1:9/x', 12, 'search-test', 1, $8)`,
      [id, rows[0]!.id, appId, msgId, endpointId, status < 300, status, clock.sqlNow()],
    );
    return id;
  };

  /** Now as the API reads it, `ms` ago, as RFC 3339. */
  const ago = (ms = 0): string => new Date(clock.nowMs() - ms).toISOString();

  return { get, all, app, endpoint, publish, settle, attempt, ago };
}
