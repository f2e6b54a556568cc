import { useState } from 'preact/hooks';
import { client, ok, payloadBytes, type Page } from './api.ts';
import { isoOf } from './parse.ts';
import { href, navigate, seg } from './router.ts';
import type { Endpoint, Message, Scope } from './types.ts';
import { Badge, CopyId, Empty, ErrorBox, Loading, Pager, Pre, pretty, Show, Time, Title, useLoad } from './ui.tsx';
import { AttemptTable } from './endpoint-detail.tsx';
import { NextAttempt } from './hold.tsx';
import { DataTable, type Column } from './table.tsx';

const STATES: [string, string][] = [
  ['', 'any'],
  ['0', 'succeeded'],
  ['1', 'pending'],
  ['3', 'sending'],
  ['2', 'dead (failed)'],
  ['4', 'canceled / skipped'],
];
const val = (e: Event): string => (e.target as HTMLInputElement).value;

/** Publish a message (operator console). */
function Publish({ scope, onPublished }: { scope: Scope; onPublished: (id: string) => void }) {
  const [type, setType] = useState('');
  const [payload, setPayload] = useState('{\n  "example": true\n}');
  const [error, setError] = useState<unknown>(null);
  const submit = async (e: Event): Promise<void> => {
    e.preventDefault();
    setError(null);
    try {
      JSON.parse(payload);
    } catch (err) {
      setError(new Error(`The payload is not JSON: ${(err as Error).message}`));
      return;
    }
    try {
      // The payload text is sent as typed (the API keeps its exact bytes).
      const text = `{"eventType":${JSON.stringify(type)},"payload":${payload}}`;
      const message = await ok(
        client.POST('/api/v1/app/{appId}/msg', {
          params: { path: { appId: scope.appId } },
          body: { eventType: type, payload: JSON.parse(payload) },
          bodySerializer: () => text,
        }),
      );
      onPublished(message.id);
    } catch (err) {
      setError(err);
    }
  };
  return (
    <form class="card form" onSubmit={(e) => void submit(e)} aria-label="Publish a message">
      <h2>Publish a message</h2>
      <label>
        Event type{' '}
        <input name="eventType" required value={type} onInput={(e) => setType(val(e))} placeholder="invoice.paid" />
      </label>
      <label>
        Payload (JSON){' '}
        <textarea
          name="payload"
          rows={5}
          value={payload}
          onInput={(e) => setPayload((e.target as HTMLTextAreaElement).value)}
        />
      </label>
      <button type="submit" class="primary">
        Publish
      </button>
      <ErrorBox error={error} />
    </form>
  );
}

/** The filter form. A delivery state belongs to one endpoint's delivery, so it is chosen with an endpoint only. */
function MessageFilters({ endpoints, onApply }: { endpoints: Endpoint[]; onApply: (f: Filters) => void }) {
  const [f, setF] = useState<Filters>(NO_FILTERS);
  const set =
    (k: keyof Filters) =>
    (e: Event): void => {
      const next = { ...f, [k]: val(e) };
      setF(k === 'endpoint' && next.endpoint === '' ? { ...next, state: '' } : next);
    };
  return (
    <form
      class="filters"
      aria-label="Filter messages"
      onSubmit={(e) => {
        e.preventDefault();
        onApply(f);
      }}
    >
      <label>
        Event type <input value={f.eventType} onInput={set('eventType')} />
      </label>
      <label>
        Channel <input value={f.channel} onInput={set('channel')} />
      </label>
      <label>
        Tag <input value={f.tag} onInput={set('tag')} />
      </label>
      <label>
        After (UTC) <input type="datetime-local" value={f.after} onInput={set('after')} />
      </label>
      <label>
        Before (UTC) <input type="datetime-local" value={f.before} onInput={set('before')} />
      </label>
      <label>
        Endpoint{' '}
        <select value={f.endpoint} onChange={set('endpoint')}>
          <option value="">all</option>
          {endpoints.map((ep) => (
            <option key={ep.id} value={ep.id}>
              {ep.url}
            </option>
          ))}
        </select>
      </label>
      <div class="field">
        <label>
          Delivery state{' '}
          <select value={f.state} onChange={set('state')} disabled={f.endpoint === ''} aria-describedby="state-hint">
            {STATES.map(([v, l]) => (
              <option key={v} value={v}>
                {l}
              </option>
            ))}
          </select>
        </label>
        <span id="state-hint" class="hint">
          {f.endpoint === ''
            ? 'Choose an endpoint first: a state is per endpoint'
            : 'Of the delivery to the chosen endpoint'}
        </span>
      </div>
      <button type="submit">Apply filters</button>
    </form>
  );
}

interface Filters {
  eventType: string;
  channel: string;
  tag: string;
  after: string;
  before: string;
  state: string;
  endpoint: string;
}
const NO_FILTERS: Filters = { eventType: '', channel: '', tag: '', after: '', before: '', state: '', endpoint: '' };

/** Messages of an application with the API's filters; with an endpoint, its deliveries' states (and holds) too. */
export function MessagesPage({ scope }: { scope: Scope }) {
  const [a, setApplied] = useState(NO_FILTERS);
  const [iterator, setIterator] = useState<string | null>(null);
  const endpoints = useLoad(
    () =>
      ok(
        client.GET('/api/v1/app/{appId}/endpoint', {
          params: { path: { appId: scope.appId }, query: { limit: '250' } },
        }),
      ),
    [scope.appId],
  );
  const filters = {
    limit: '25',
    iterator,
    with_content: 'false',
    event_types: a.eventType === '' ? undefined : [a.eventType],
    channel: a.channel,
    tag: a.tag,
    after: isoOf(a.after),
    before: isoOf(a.before),
  };
  const byEndpoint = a.endpoint !== '';
  const appId = scope.appId;
  const list = useLoad(
    (): Promise<Page<Message>> =>
      byEndpoint
        ? ok(
            client.GET('/api/v1/app/{appId}/endpoint/{endpointId}/msg', {
              params: {
                path: { appId, endpointId: a.endpoint },
                query: { ...filters, status: a.state, expanded_statuses: 'true' },
              },
            }),
          )
        : ok(client.GET('/api/v1/app/{appId}/msg', { params: { path: { appId }, query: filters } })),
    [scope.appId, JSON.stringify(a), iterator],
    5000,
  );
  const url = endpoints.data?.data.find((ep) => ep.id === a.endpoint)?.url ?? a.endpoint;
  const columns: Column<Message>[] = [
    { label: 'Event type', cell: (m) => <a href={href(`${scope.base}/messages/${seg(m.id)}`)}>{m.eventType}</a> },
    { label: 'Id', cell: (m) => <CopyId id={m.id} label="message id" /> },
    { label: 'Created', cell: (m) => <Time iso={m.timestamp} /> },
    {
      label: 'Channels / tags',
      cell: (m) =>
        [...(m.channels ?? []), ...(m.tags ?? []).map((t) => `#${t}`)].join(', ') || <span class="muted">—</span>,
    },
    ...(byEndpoint
      ? [
          { label: 'Delivery', cell: (m: Message) => <Badge state={m.deliveryState ?? 'pending'} /> },
          {
            label: 'Next attempt',
            cell: (m: Message) =>
              m.deliveryState === 'pending' ? (
                <NextAttempt hold={m} next={m.nextAttempt ?? null} />
              ) : (
                <span class="muted">—</span>
              ),
          },
        ]
      : []),
  ];
  return (
    <>
      <Title sub="Newest first. Open one to see its payload, destinations and attempts.">Messages</Title>
      <MessageFilters
        endpoints={endpoints.data?.data ?? []}
        onApply={(f) => {
          setIterator(null);
          setApplied(f);
        }}
      />
      {byEndpoint ? (
        <p class="muted">
          Deliveries to <strong>{url}</strong>
          {a.state === '' ? '' : `, state ${STATES.find(([v]) => v === a.state)?.[1] ?? a.state}`}.
        </p>
      ) : null}
      <Show of={list}>
        {(page) =>
          page.data.length === 0 ? (
            <Empty title="No messages match.">
              {scope.operator
                ? 'Publish one with the form below, or through the API (POST /api/v1/app/{app}/msg).'
                : 'Messages appear here as they are sent to you.'}
            </Empty>
          ) : (
            <DataTable columns={columns} rows={page.data} rowKey={(m) => m.id} />
          )
        }
      </Show>
      <Pager page={list.data} at={iterator} onPage={setIterator} />
      {scope.operator && scope.canWrite ? (
        <Publish scope={scope} onPublished={(id) => navigate(`${scope.base}/messages/${seg(id)}`)} />
      ) : null}
    </>
  );
}

/** One message: payload (pretty and exact bytes), destinations, attempts. */
export function MessageDetail({ scope, msgId }: { scope: Scope; msgId: string }) {
  const path = { appId: scope.appId, msgId };
  const base = `${scope.appId}/${msgId}`;
  // The message as text: the payload's exact bytes are shown from it.
  const raw = useLoad(
    () => ok(client.GET('/api/v1/app/{appId}/msg/{msgId}', { params: { path }, parseAs: 'text' })),
    [base],
  );
  const destinations = useLoad(
    () =>
      ok(
        client.GET('/api/v1/app/{appId}/msg/{msgId}/endpoint', {
          params: { path, query: { expanded_statuses: 'true' } },
        }),
      ),
    [base],
    3000,
  );
  const attempts = useLoad(
    () =>
      ok(client.GET('/api/v1/app/{appId}/attempt/msg/{msgId}', { params: { path, query: { with_content: 'false' } } })),
    [base],
    3000,
  );
  const [exact, setExact] = useState(false);
  const onExact = (e: Event) => setExact((e.target as HTMLInputElement).checked);
  if (raw.data === undefined)
    return (
      <>
        {raw.error === null ? (
          <Loading />
        ) : (
          <>
            <Title>Message</Title>
            <ErrorBox error={raw.error} retry={raw.reload} busy={raw.loading} />
          </>
        )}
      </>
    );
  const text = raw.data ?? '{}';
  const msg = JSON.parse(text) as Message;
  const bytes = payloadBytes(text);
  return (
    <>
      <Title
        sub={
          <>
            <CopyId id={msg.id} label="message id" /> · <Time iso={msg.timestamp} />
            {msg.eventId === null ? null : (
              <>
                {' '}
                · event id <code>{msg.eventId}</code>
              </>
            )}
          </>
        }
      >
        {msg.eventType}
      </Title>
      <section class="card" aria-labelledby="payload-h">
        <h2 id="payload-h">Payload</h2>
        <div class="row">
          <label class="inline">
            <input type="checkbox" checked={exact} onChange={onExact} /> Exact bytes as delivered
          </label>
          <button type="button" onClick={() => void navigator.clipboard.writeText(bytes)}>
            Copy exact bytes
          </button>
        </div>
        <Pre label="Payload text" text={exact ? bytes : pretty(bytes)} />
      </section>
      <section class="card" aria-labelledby="dest-h">
        <h2 id="dest-h">Destinations</h2>
        <Show of={destinations}>
          {(page) =>
            page.data.length === 0 ? (
              <Empty title="No endpoint takes this message.">
                Its event type or channels match no endpoint's filter.
              </Empty>
            ) : (
              <DataTable
                rows={page.data}
                rowKey={(d) => d.id}
                columns={[
                  {
                    label: 'Endpoint',
                    cell: (d) => (
                      <>
                        {d.url}
                        <div>
                          <CopyId id={d.id} label="endpoint id" />
                        </div>
                      </>
                    ),
                  },
                  { label: 'Delivery', cell: (d) => <Badge state={d.deliveryState} /> },
                  {
                    label: 'Next attempt',
                    cell: (d) =>
                      d.deliveryState === 'pending' || d.deliveryState === 'leased' ? (
                        <NextAttempt hold={d} next={d.nextAttempt} />
                      ) : (
                        <span class="muted">none ({d.deliveryState})</span>
                      ),
                  },
                  {
                    label: 'Timeline',
                    cell: (d) => (
                      <a href={href(`${scope.base}/messages/${seg(msg.id)}/endpoints/${seg(d.id)}`)}>Open timeline</a>
                    ),
                  },
                ]}
              />
            )
          }
        </Show>
      </section>
      <section class="card" aria-labelledby="att-h">
        <h2 id="att-h">Attempts</h2>
        <Show of={attempts}>
          {(page) =>
            page.data.length === 0 ? (
              <Empty title="No attempts yet.">
                The first attempt is made as soon as a dispatcher claims the delivery.
              </Empty>
            ) : (
              <AttemptTable scope={scope} attempts={page.data} showEndpoint />
            )
          }
        </Show>
      </section>
    </>
  );
}
