import { client, ok, type Page } from './api.ts';
import type { Attempt, DeliveryFound, Message } from './types.ts';

/**
 * A search of the delivery log as the search page holds it: in its address (`…/search?kind=delivery&after=…`), so
 * that a search, and the page of results it is on, survive opening a result and coming back, a reload or a
 * bookmark. Instants are the form's `datetime-local` values, read as UTC.
 */
export interface SearchForm {
  readonly kind: 'msg' | 'delivery' | 'attempt';
  readonly after: string;
  readonly before: string;
  readonly eventType: string;
  readonly channel: string;
  readonly tag: string;
  readonly endpoint: string;
  /** A delivery state, or `undelivered` (every state but succeeded). */
  readonly state: string;
  /** A status class: `0` (no response), `200` … `500`. */
  readonly code: string;
  /** An HTTP status, exactly. */
  readonly statusCode: string;
  /** An attempt's result: `0` succeeded, `2` failed. */
  readonly result: string;
  readonly field: string;
  readonly value: string;
}

/** Items per page. */
export const SEARCH_PAGE_SIZE = 25;

/** Every state but succeeded (what the never-delivered view lists). */
export const UNDELIVERED_STATES = 'pending,leased,dead,skipped,canceled';

const KEYS: readonly (keyof SearchForm)[] = [
  'kind',
  'after',
  'before',
  'eventType',
  'channel',
  'tag',
  'endpoint',
  'state',
  'code',
  'statusCode',
  'result',
  'field',
  'value',
];

/** A `datetime-local` value (UTC, to the minute) of the instant `ms`. */
export const localOf = (ms: number): string => new Date(ms).toISOString().slice(0, 16);

/** A `datetime-local` value read as UTC, as RFC 3339; undefined when empty or not an instant. */
export function isoOf(local: string): string | undefined {
  if (local === '') return undefined;
  const d = new Date(`${local}Z`);
  return Number.isNaN(d.getTime()) ? undefined : d.toISOString();
}

/** The search of an address's query (`?kind=…`), `after` defaulting to `defaultAfter`; and the page's iterator. */
export function readSearch(path: string, defaultAfter: string): { form: SearchForm; iterator: string | null } {
  const q = new URLSearchParams(path.split('?')[1] ?? '');
  const text = (k: string): string => q.get(k) ?? '';
  const kind = text('kind');
  return {
    form: {
      kind: kind === 'delivery' || kind === 'attempt' ? kind : 'msg',
      after: q.get('after') ?? defaultAfter,
      before: text('before'),
      eventType: text('eventType'),
      channel: text('channel'),
      tag: text('tag'),
      endpoint: text('endpoint'),
      state: text('state'),
      code: text('code'),
      statusCode: text('statusCode'),
      result: text('result'),
      field: text('field'),
      value: text('value'),
    },
    iterator: q.get('it'),
  };
}

/** The address of the search `form` under `base` (its page `iterator`, null = the first). */
export function searchRoute(base: string, form: SearchForm, iterator: string | null): string {
  const q = new URLSearchParams();
  for (const k of KEYS) if (form[k] !== '' && !(k === 'kind' && form.kind === 'msg')) q.set(k, form[k]);
  if (iterator !== null) q.set('it', iterator);
  const s = q.toString();
  return `${base}/search${s === '' ? '' : `?${s}`}`;
}

/** What one page of a search answers. */
export type SearchAnswer =
  | { readonly kind: 'msg'; readonly page: Page<Message> }
  | { readonly kind: 'delivery'; readonly page: Page<DeliveryFound> }
  | { readonly kind: 'attempt'; readonly page: Page<Attempt> };

/**
 * The API call of `form` in application `appId` at page `iterator`; null for an attempt search without an endpoint
 * (attempts are indexed by endpoint: the API would refuse it).
 */
export function searchCall(
  appId: string,
  form: SearchForm,
  iterator: string | null,
): (() => Promise<SearchAnswer>) | null {
  const path = { appId };
  const common = {
    limit: String(SEARCH_PAGE_SIZE),
    iterator,
    after: isoOf(form.after),
    before: isoOf(form.before),
    event_types: form.eventType === '' ? undefined : [form.eventType],
    channel: form.channel,
    tag: form.tag,
    payload_field: form.field === '' ? undefined : form.field,
    payload_value: form.field === '' ? undefined : form.value,
  };
  if (form.kind === 'msg') {
    return async () => ({
      kind: 'msg',
      page: await ok(client.GET('/api/v1/app/{appId}/search/msg', { params: { path, query: common } })),
    });
  }
  if (form.kind === 'delivery') {
    const state = form.state === 'undelivered' ? UNDELIVERED_STATES : form.state;
    const query = {
      ...common,
      endpoint_id: form.endpoint,
      delivery_state: state,
      status_code_class: form.code,
      status_code: form.statusCode,
    };
    return async () => ({
      kind: 'delivery',
      page: await ok(client.GET('/api/v1/app/{appId}/search/delivery', { params: { path, query } })),
    });
  }
  if (form.endpoint === '') return null;
  const query = {
    ...common,
    endpoint_id: form.endpoint,
    status: form.result,
    status_code_class: form.code,
    status_code: form.statusCode,
    with_msg: 'true',
  };
  return async () => ({
    kind: 'attempt',
    page: await ok(client.GET('/api/v1/app/{appId}/search/attempt', { params: { path, query } })),
  });
}
