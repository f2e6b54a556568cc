import { useState } from 'preact/hooks';
import { client, ok } from './api.ts';
import type { EndpointRef, Scope } from './types.ts';
import { ErrorBox, Show, useLoad } from './ui.tsx';

/** `GET|PUT …/endpoint/{ep}/filter` (docs/reference/api.md, "Payload filters"). */
interface FilterView {
  filter: Record<string, unknown> | null;
}

const EXAMPLE = '{\n  "payload": { "amount": { "$gte": 100 }, "status": { "$in": ["paid", "shipped"] } }\n}';
const SAMPLE = '{\n  "amount": 250,\n  "status": "paid"\n}';

/** The text of a JSON field, parsed; a parse error names the field. */
function parsed(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new Error(`${what} is not JSON: ${(error as Error).message}`);
  }
}

/**
 * The endpoint's payload filter: shown, edited and saved (with the write capability), cleared, and tested against a
 * sample message through `POST …/filter/test`, which checks it as saving does. A change applies to messages published
 * after it.
 */
export function FilterCard({ scope, endpoint }: { scope: Scope; endpoint: EndpointRef }) {
  const loaded = useLoad(
    () => ok(client.GET('/api/v1/app/{appId}/endpoint/{endpointId}/filter', { params: { path: endpoint } })),
    [endpoint.appId, endpoint.endpointId],
  );
  return (
    <section class="card" aria-labelledby="filter-h">
      <h2 id="filter-h">Payload filter</h2>
      <Show of={loaded} label="Loading filter…">
        {(view) => <FilterEditor scope={scope} endpoint={endpoint} view={view} onSaved={loaded.reload} />}
      </Show>
    </section>
  );
}

function FilterEditor({
  scope,
  endpoint,
  view,
  onSaved,
}: {
  scope: Scope;
  endpoint: EndpointRef;
  view: FilterView;
  onSaved: () => void;
}) {
  const [text, setText] = useState(view.filter === null ? '' : JSON.stringify(view.filter, null, 2));
  const [eventType, setEventType] = useState('invoice.paid');
  const [channels, setChannels] = useState('');
  const [sample, setSample] = useState(SAMPLE);
  const [error, setError] = useState<unknown>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [result, setResult] = useState<boolean | null>(null);
  const [busy, setBusy] = useState(false);
  const run = async (work: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    setNotice(null);
    try {
      await work();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  const filter = () => (text.trim() === '' ? {} : parsed(text, 'The filter')) as Record<string, unknown>;
  const params = { path: endpoint };
  const save = () =>
    run(async () => {
      const saved: FilterView = await ok(
        client.PUT('/api/v1/app/{appId}/endpoint/{endpointId}/filter', { params, body: { filter: filter() } }),
      );
      setText(saved.filter === null ? '' : JSON.stringify(saved.filter, null, 2));
      setNotice(saved.filter === null ? 'Filter cleared: every message of its types and channels.' : 'Filter saved.');
      onSaved();
    });
  const clear = () =>
    run(async () => {
      await ok(client.DELETE('/api/v1/app/{appId}/endpoint/{endpointId}/filter', { params }));
      setText('');
      setNotice('Filter cleared: every message of its types and channels.');
      onSaved();
    });
  const test = () =>
    run(async () => {
      setResult(null);
      const list = channels
        .split(',')
        .map((c) => c.trim())
        .filter((c) => c !== '');
      const message = {
        eventType,
        ...(list.length === 0 ? {} : { channels: list }),
        payload: parsed(sample, 'The sample payload'),
      };
      const answer = await ok(
        client.POST('/api/v1/app/{appId}/filter/test', {
          params: { path: { appId: endpoint.appId } },
          body: { filter: filter(), message },
        }),
      );
      setResult(answer.matches);
    });
  return (
    <div class="form">
      <p class="muted">
        Only messages that match get a delivery to this endpoint; the others are listed on the message as skipped by
        filter. A change applies to messages published after it. Operators: <code>$eq</code> <code>$neq</code>{' '}
        <code>$gt</code> <code>$gte</code> <code>$lt</code> <code>$lte</code> <code>$in</code> <code>$nin</code>{' '}
        <code>$exists</code> <code>$and</code> <code>$or</code> <code>$not</code>, over <code>eventType</code>,{' '}
        <code>channels</code>, <code>tags</code> and <code>payload</code>.
      </p>
      <label>
        Filter (JSON; empty = every message)
        <textarea
          name="filter"
          class="code"
          rows={Math.min(16, Math.max(5, text.split('\n').length + 1))}
          spellcheck={false}
          placeholder={EXAMPLE}
          value={text}
          readOnly={!scope.canWrite}
          onInput={(e) => setText((e.target as HTMLTextAreaElement).value)}
        />
      </label>
      {scope.canWrite ? (
        <div class="row">
          <button type="button" class="primary" disabled={busy} onClick={() => void save()}>
            Save filter
          </button>
          {view.filter === null ? null : (
            <button type="button" disabled={busy} onClick={() => void clear()}>
              Clear filter
            </button>
          )}
        </div>
      ) : null}
      {scope.canWrite ? (
        <>
          <h3>Test against a sample message</h3>
          <div class="row">
            <label>
              Event type
              <input name="sampleEventType" value={eventType} onInput={(e) => setEventType(value(e))} />
            </label>
            <label>
              Channels (comma-separated)
              <input
                name="sampleChannels"
                value={channels}
                onInput={(e) => setChannels(value(e))}
                placeholder="eu, vip"
              />
            </label>
          </div>
          <label>
            Sample payload (JSON)
            <textarea
              name="samplePayload"
              class="code"
              rows={5}
              spellcheck={false}
              value={sample}
              onInput={(e) => setSample((e.target as HTMLTextAreaElement).value)}
            />
          </label>
          <div class="row">
            <button type="button" disabled={busy} onClick={() => void test()}>
              Test filter
            </button>
            <span role="status" aria-live="polite">
              {result === null ? null : result ? (
                <span class="badge badge-ok">match · this endpoint gets a delivery</span>
              ) : (
                <span class="badge badge-bad">no match · no delivery</span>
              )}
            </span>
          </div>
        </>
      ) : null}
      {notice === null ? null : (
        <p class="notice" role="status">
          {notice}
        </p>
      )}
      <ErrorBox error={error} />
    </div>
  );
}

const value = (e: Event): string => (e.target as HTMLInputElement).value;
