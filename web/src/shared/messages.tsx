import { useState } from 'preact/hooks';
import { apiText, get, payloadBytes, query, RawJson, seg, type Page } from './api.ts';
import { href, navigate } from './router.ts';
import type { Destination, Endpoint, Message, Scope } from './types.ts';
import { Badge, CopyId, Empty, ErrorBox, Loading, Pager, Pre, pretty, Time, Title, useLoad } from './ui.tsx';
import { AttemptTable } from './endpoint-detail.tsx';
import type { Attempt } from './types.ts';

const STATES: [string, string][] = [['', 'any'], ['0', 'succeeded'], ['1', 'pending'], ['3', 'sending'], ['2', 'dead (failed)'], ['4', 'canceled / skipped']];
const val = (e: Event): string => (e.target as HTMLInputElement).value;
/** A datetime-local value (UTC) as ISO, or undefined. */
const isoOf = (local: string): string | undefined => (local === '' ? undefined : new Date(`${local}Z`).toISOString());

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
      const text = await apiText('POST', `/api/v1/app/${seg(scope.appId)}/msg`, new RawJson(`{"eventType":${JSON.stringify(type)},"payload":${payload}}`));
      onPublished((JSON.parse(text ?? '{}') as { id: string }).id);
    } catch (err) { setError(err); }
  };
  return (
    <form class="card form" onSubmit={(e) => void submit(e)} aria-label="Publish a message">
      <h2>Publish a message</h2>
      <label>Event type <input name="eventType" required value={type} onInput={(e) => setType(val(e))} placeholder="invoice.paid" /></label>
      <label>Payload (JSON) <textarea name="payload" rows={5} value={payload} onInput={(e) => setPayload((e.target as HTMLTextAreaElement).value)} /></label>
      <button type="submit" class="primary">Publish</button>
      <ErrorBox error={error} />
    </form>
  );
}

/** Messages of an application with the API's filters; with a delivery state, those of one endpoint. */
export function MessagesPage({ scope }: { scope: Scope }) {
  const [f, setF] = useState({ eventType: '', channel: '', tag: '', after: '', before: '', state: '', endpoint: '' });
  const [applied, setApplied] = useState(f);
  const [iterator, setIterator] = useState<string | null>(null);
  const endpoints = useLoad(() => get<Page<Endpoint>>(`/api/v1/app/${seg(scope.appId)}/endpoint?limit=250`), [scope.appId]);
  const a = applied;
  const filters = { limit: 25, iterator, with_content: false, event_types: a.eventType === '' ? undefined : [a.eventType], channel: a.channel, tag: a.tag, after: isoOf(a.after), before: isoOf(a.before) };
  const byEndpoint = a.endpoint !== '' || a.state !== '';
  const list = useLoad(() => {
    if (!byEndpoint) return get<Page<Message>>(`/api/v1/app/${seg(scope.appId)}/msg${query(filters)}`);
    const ep = a.endpoint !== '' ? a.endpoint : endpoints.data?.data[0]?.id;
    if (ep === undefined) return Promise.resolve({ data: [], iterator: null, prevIterator: null, done: true } as Page<Message>);
    return get<Page<Message>>(`/api/v1/app/${seg(scope.appId)}/endpoint/${seg(ep)}/msg${query({ ...filters, status: a.state, expanded_statuses: true })}`);
  }, [scope.appId, JSON.stringify(a), iterator, endpoints.data === undefined], 5000);
  const set = (k: keyof typeof f) => (e: Event) => setF({ ...f, [k]: val(e) });
  return (
    <>
      <Title sub="Newest first. Open one to see its payload, destinations and attempts.">Messages</Title>
      <form class="filters" aria-label="Filter messages" onSubmit={(e) => { e.preventDefault(); setIterator(null); setApplied(f); }}>
        <label>Event type <input value={f.eventType} onInput={set('eventType')} /></label>
        <label>Channel <input value={f.channel} onInput={set('channel')} /></label>
        <label>Tag <input value={f.tag} onInput={set('tag')} /></label>
        <label>After (UTC) <input type="datetime-local" value={f.after} onInput={set('after')} /></label>
        <label>Before (UTC) <input type="datetime-local" value={f.before} onInput={set('before')} /></label>
        <label>Endpoint <select value={f.endpoint} onChange={set('endpoint')}><option value="">all</option>{(endpoints.data?.data ?? []).map((ep) => <option key={ep.id} value={ep.id}>{ep.url}</option>)}</select></label>
        <label>Delivery state <select value={f.state} onChange={set('state')}>{STATES.map(([v, l]) => <option key={v} value={v}>{l}</option>)}</select></label>
        <button type="submit">Apply filters</button>
      </form>
      {byEndpoint && a.endpoint === '' ? <p class="muted">A delivery state is per endpoint: showing the first endpoint; choose another above.</p> : null}
      <ErrorBox error={list.error} />
      {list.data === undefined ? <Loading /> : list.data.data.length === 0 ? (
        <Empty title="No messages match.">{scope.operator ? 'Publish one with the form below, or through the API (POST /api/v1/app/{app}/msg).' : 'Messages appear here as they are sent to you.'}</Empty>
      ) : (
        <table>
          <thead><tr><th scope="col">Event type</th><th scope="col">Id</th><th scope="col">Created</th><th scope="col">Channels / tags</th>{byEndpoint ? <th scope="col">Delivery</th> : null}</tr></thead>
          <tbody>{list.data.data.map((m) => (
            <tr key={m.id}>
              <td><a href={href(`${scope.base}/messages/${seg(m.id)}`)}>{m.eventType}</a></td>
              <td><CopyId id={m.id} label="message id" /></td>
              <td><Time iso={m.timestamp} /></td>
              <td>{[...(m.channels ?? []), ...(m.tags ?? []).map((t) => `#${t}`)].join(', ') || <span class="muted">—</span>}</td>
              {byEndpoint ? <td><Badge state={m.deliveryState ?? 'pending'} /></td> : null}
            </tr>
          ))}</tbody>
        </table>
      )}
      <Pager page={list.data} at={iterator} onPage={setIterator} />
      {scope.operator && scope.canWrite ? <Publish scope={scope} onPublished={(id) => navigate(`${scope.base}/messages/${seg(id)}`)} /> : null}
    </>
  );
}

/** One message: payload (pretty and exact bytes), destinations, attempts. */
export function MessageDetail({ scope, msgId }: { scope: Scope; msgId: string }) {
  const base = `/api/v1/app/${seg(scope.appId)}/msg/${seg(msgId)}`;
  const raw = useLoad(() => apiText('GET', base), [base]);
  const destinations = useLoad(() => get<Page<Destination>>(`${base}/endpoint?expanded_statuses=true`), [base], 3000);
  const attempts = useLoad(() => get<Page<Attempt>>(`/api/v1/app/${seg(scope.appId)}/attempt/msg/${seg(msgId)}?with_content=false`), [base], 3000);
  const [exact, setExact] = useState(false);
  if (raw.data === undefined) return <>{raw.error === null ? <Loading /> : <><Title>Message</Title><ErrorBox error={raw.error} /></>}</>;
  const text = raw.data ?? '{}';
  const msg = JSON.parse(text) as Message;
  const bytes = payloadBytes(text);
  return (
    <>
      <Title sub={<><CopyId id={msg.id} label="message id" /> · <Time iso={msg.timestamp} />{msg.eventId === null ? null : <> · event id <code>{msg.eventId}</code></>}</>}>{msg.eventType}</Title>
      <section class="card" aria-labelledby="payload-h">
        <h2 id="payload-h">Payload</h2>
        <div class="row">
          <label class="inline"><input type="checkbox" checked={exact} onChange={(e) => setExact((e.target as HTMLInputElement).checked)} /> Exact bytes as delivered</label>
          <button type="button" onClick={() => void navigator.clipboard.writeText(bytes)}>Copy exact bytes</button>
        </div>
        <Pre label="Payload text" text={exact ? bytes : pretty(bytes)} />
      </section>
      <section class="card" aria-labelledby="dest-h">
        <h2 id="dest-h">Destinations</h2>
        <ErrorBox error={destinations.error} />
        {destinations.data === undefined ? <Loading /> : destinations.data.data.length === 0 ? <Empty title="No endpoint takes this message.">Its event type or channels match no endpoint's filter.</Empty> : (
          <table>
            <thead><tr><th scope="col">Endpoint</th><th scope="col">Delivery</th><th scope="col">Next attempt</th><th scope="col">Timeline</th></tr></thead>
            <tbody>{destinations.data.data.map((d) => (
              <tr key={d.id}>
                <td>{d.url}<div><CopyId id={d.id} label="endpoint id" /></div></td>
                <td><Badge state={d.deliveryState} /></td>
                <td><Time iso={d.nextAttempt} /></td>
                <td><a href={href(`${scope.base}/messages/${seg(msg.id)}/endpoints/${seg(d.id)}`)}>Open timeline</a></td>
              </tr>
            ))}</tbody>
          </table>
        )}
      </section>
      <section class="card" aria-labelledby="att-h">
        <h2 id="att-h">Attempts</h2>
        <ErrorBox error={attempts.error} />
        {attempts.data === undefined ? <Loading /> : attempts.data.data.length === 0 ? <Empty title="No attempts yet.">The first attempt is made as soon as a dispatcher claims the delivery.</Empty> : <AttemptTable scope={scope} attempts={attempts.data.data} showEndpoint />}
      </section>
    </>
  );
}
