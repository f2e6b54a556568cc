import type { ComponentChildren } from 'preact';
import { seg, type Page } from './api.ts';
import type { SearchAnswer } from './search-query.ts';
import { NextAttempt } from './hold.tsx';
import { href } from './router.ts';
import { DataTable, type Column } from './table.tsx';
import type { Attempt, DeliveryFound, Endpoint, Message, Scope } from './types.ts';
import { Badge, CopyId, Empty, Time } from './ui.tsx';

const none = <span class="muted">—</span>;

/** The address of a message's page, and of its delivery to one endpoint (the timeline, with its attempts). */
export const messageHref = (scope: Scope, msgId: string): string => href(`${scope.base}/messages/${seg(msgId)}`);
export const deliveryHref = (scope: Scope, msgId: string, endpointId: string): string =>
  href(`${scope.base}/messages/${seg(msgId)}/endpoints/${seg(endpointId)}`);

/** Channels and tags of a message, one line. */
function labels(channels: string[] | null, tags: string[] | null): ComponentChildren {
  return [...(channels ?? []), ...(tags ?? []).map((t) => `#${t}`)].join(', ') || none;
}

/** An endpoint by its URL when it is listed (a deleted one by its id). */
function EndpointName({ scope, id, endpoints }: { scope: Scope; id: string; endpoints: readonly Endpoint[] }) {
  const ep = endpoints.find((e) => e.id === id);
  return ep === undefined ? <code>{id}</code> : <a href={href(`${scope.base}/endpoints/${seg(id)}`)}>{ep.url}</a>;
}

/** The columns of a delivery found (the search's, and the never-delivered view's without the endpoint). */
export function deliveryColumns(scope: Scope, endpoints: readonly Endpoint[] | null): readonly Column<DeliveryFound>[] {
  return [
    {
      label: 'Message',
      cell: (d) => (
        <a href={messageHref(scope, d.msgId)} aria-label={`${d.eventType} ${d.msgId}`} data-msg={d.msgId}>
          {d.eventType}
        </a>
      ),
    },
    { label: 'Published', cell: (d) => <Time iso={d.msgTimestamp} /> },
    ...(endpoints === null
      ? []
      : [
          {
            label: 'Endpoint',
            cell: (d: DeliveryFound) => <EndpointName scope={scope} id={d.endpointId} endpoints={endpoints} />,
          },
        ]),
    {
      label: 'State',
      cell: (d) => (
        <>
          <Badge state={d.deliveryState} />
          {d.reason === null ? null : <span class="muted"> {d.reason.replaceAll('_', ' ')}</span>}
        </>
      ),
    },
    { label: 'Since', cell: (d) => <Time iso={d.stateChangedAt} /> },
    {
      label: 'Last attempt',
      cell: (d) =>
        d.attemptCount === 0 ? (
          <span class="muted">none</span>
        ) : (
          <>
            {d.lastStatusCode ?? d.lastErrorKind ?? '—'} <span class="muted">({d.attemptCount} in all)</span>
          </>
        ),
    },
    {
      label: 'Next attempt',
      cell: (d) => (d.deliveryState === 'pending' ? <NextAttempt hold={d} next={d.nextAttempt} /> : none),
    },
    {
      label: 'Record',
      cell: (d) => (
        <a href={deliveryHref(scope, d.msgId, d.endpointId)} aria-label={`Timeline of ${d.msgId} to ${d.endpointId}`}>
          Timeline
        </a>
      ),
    },
  ];
}

/** Messages found. */
function MessageRows({ scope, rows }: { scope: Scope; rows: Message[] }) {
  return (
    <DataTable
      label="Messages found"
      rows={rows}
      rowKey={(m) => m.id}
      columns={[
        {
          label: 'Message',
          cell: (m) => (
            <a href={messageHref(scope, m.id)} aria-label={`${m.eventType} ${m.id}`} data-msg={m.id}>
              {m.eventType}
            </a>
          ),
        },
        { label: 'Id', cell: (m) => <CopyId id={m.id} label="message id" /> },
        { label: 'Published', cell: (m) => <Time iso={m.timestamp} /> },
        { label: 'Channels / tags', cell: (m) => labels(m.channels, m.tags) },
      ]}
    />
  );
}

/** Attempts found. */
function AttemptRows({ scope, rows }: { scope: Scope; rows: Attempt[] }) {
  return (
    <DataTable
      label="Attempts found"
      rows={rows}
      rowKey={(a) => a.id}
      columns={[
        { label: 'When', cell: (a) => <Time iso={a.timestamp} /> },
        {
          label: 'Result',
          cell: (a) => (
            <>
              <Badge state={a.statusText} /> #{a.attemptNumber}
            </>
          ),
        },
        { label: 'Status', cell: (a) => (a.responseStatusCode === 0 ? (a.errorKind ?? '—') : a.responseStatusCode) },
        {
          label: 'Message',
          cell: (a) => (
            <a
              href={messageHref(scope, a.msgId)}
              aria-label={`${a.msg?.eventType ?? 'message'} ${a.msgId}`}
              data-msg={a.msgId}
            >
              {a.msg?.eventType ?? 'message'}
            </a>
          ),
        },
        {
          label: 'Record',
          cell: (a) => (
            <a href={deliveryHref(scope, a.msgId, a.endpointId)} aria-label={`Timeline of attempt ${a.id}`}>
              Timeline
            </a>
          ),
        },
      ]}
    />
  );
}

/** What one page of a search shows: its rows, or why there are none. */
export function SearchRows({
  scope,
  answer,
  endpoints,
}: {
  scope: Scope;
  answer: SearchAnswer;
  endpoints: readonly Endpoint[];
}) {
  const page: Page<unknown> = answer.page;
  if (page.data.length === 0) {
    return page.done ? (
      <Empty title="Nothing matches in this window.">
        Widen the window (after, before) or remove a filter. A search reads one window of at most 7 days by default.
      </Empty>
    ) : (
      <Empty title="No match in the part of the window read so far.">
        Each request reads a bounded number of rows; choose Next page to read on from where this one stopped.
      </Empty>
    );
  }
  if (answer.kind === 'msg') return <MessageRows scope={scope} rows={answer.page.data} />;
  if (answer.kind === 'attempt') return <AttemptRows scope={scope} rows={answer.page.data} />;
  return (
    <DataTable
      label="Deliveries found"
      rows={answer.page.data}
      rowKey={(d) => `${d.msgId}.${d.endpointId}`}
      columns={deliveryColumns(scope, endpoints)}
    />
  );
}

/** First page and Next page over a search's iterators (each page has its own address, so Back returns to it). */
export function SearchPager({
  page,
  at,
  onPage,
}: {
  page: Page<unknown> | undefined;
  at: string | null;
  onPage: (iterator: string | null) => void;
}) {
  const more = page !== undefined && !page.done && page.iterator !== null;
  if (at === null && !more) return null;
  return (
    <nav class="pager" aria-label="Pages">
      <button type="button" disabled={at === null} onClick={() => onPage(null)}>
        ← First page
      </button>
      <button type="button" disabled={!more} onClick={() => onPage(page?.iterator ?? null)}>
        Next page →
      </button>
    </nav>
  );
}
