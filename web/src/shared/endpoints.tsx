import { useState } from 'preact/hooks';
import { client, ok } from './api.ts';
import { listField } from './parse.ts';
import { href, navigate, seg } from './router.ts';
import type { Endpoint, Scope } from './types.ts';
import { DataTable } from './table.tsx';
import { Badge, CopyId, Empty, ErrorBox, Pager, Show, Time, Title, useLoad } from './ui.tsx';

export { listField } from './parse.ts';

/** The health badge of one endpoint (its own health call). */
function HealthBadge({ scope, ep }: { scope: Scope; ep: Endpoint }) {
  const h = useLoad(
    () =>
      ok(
        client.GET('/api/v1/app/{appId}/endpoint/{endpointId}/health', {
          params: { path: { appId: scope.appId, endpointId: ep.id } },
        }),
      ),
    [ep.id],
    10_000,
  );
  if (h.data === undefined) return h.error === null ? <span class="muted">…</span> : <Badge state="unknown" />;
  const failing = h.data.failingSince !== null && h.data.status === 'active';
  return (
    <span class="badges">
      <Badge state={h.data.status} />
      {h.data.breaker.state === 'closed' ? null : <Badge state={h.data.breaker.state} />}
      {failing ? <Badge state="failing" /> : null}
    </span>
  );
}

/** The add-endpoint form. */
function CreateEndpoint({ scope, onCreated }: { scope: Scope; onCreated: (ep: Endpoint) => void }) {
  const [url, setUrl] = useState('');
  const [description, setDescription] = useState('');
  const [types, setTypes] = useState('');
  const [channels, setChannels] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event): Promise<void> => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const body = { url, description, filterTypes: listField(types), channels: listField(channels) };
      const ep = await ok(
        client.POST('/api/v1/app/{appId}/endpoint', { params: { path: { appId: scope.appId } }, body }),
      );
      setUrl('');
      setDescription('');
      setTypes('');
      setChannels('');
      onCreated(ep);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="card form" onSubmit={(e) => void submit(e)} aria-label="Add an endpoint">
      <h2>Add an endpoint</h2>
      <label>
        URL{' '}
        <input
          name="url"
          type="url"
          required
          placeholder="https://example.com/webhooks"
          value={url}
          onInput={(e) => setUrl((e.target as HTMLInputElement).value)}
        />
      </label>
      <label>
        Description{' '}
        <input
          name="description"
          value={description}
          onInput={(e) => setDescription((e.target as HTMLInputElement).value)}
        />
      </label>
      <label>
        Event types (comma-separated, empty = all){' '}
        <input name="filterTypes" value={types} onInput={(e) => setTypes((e.target as HTMLInputElement).value)} />
      </label>
      <label>
        Channels (comma-separated, empty = all){' '}
        <input name="channels" value={channels} onInput={(e) => setChannels((e.target as HTMLInputElement).value)} />
      </label>
      <button type="submit" class="primary" disabled={busy}>
        {busy ? 'Adding…' : 'Add endpoint'}
      </button>
      <ErrorBox error={error} />
    </form>
  );
}

/** Endpoints of an application, with health badges, paged with the API's iterators. */
export function EndpointsPage({ scope }: { scope: Scope }) {
  const [iterator, setIterator] = useState<string | null>(null);
  const list = useLoad(
    () =>
      ok(
        client.GET('/api/v1/app/{appId}/endpoint', {
          params: { path: { appId: scope.appId }, query: { limit: '25', iterator } },
        }),
      ),
    [scope.appId, iterator],
  );
  return (
    <>
      <Title sub="Where this application's messages are delivered.">Endpoints</Title>
      <Show of={list}>
        {(page) =>
          page.data.length === 0 ? (
            <Empty title="No endpoints yet.">
              {scope.canWrite
                ? 'Add the URL that should receive webhooks with the form below.'
                : 'Ask the owner of this account to add one.'}
            </Empty>
          ) : (
            <DataTable
              rows={page.data}
              rowKey={(ep) => ep.id}
              columns={[
                {
                  label: 'URL',
                  cell: (ep) => (
                    <>
                      <a href={href(`${scope.base}/endpoints/${seg(ep.id)}`)}>{ep.url}</a>
                      {ep.description === '' ? null : <div class="muted">{ep.description}</div>}
                    </>
                  ),
                },
                { label: 'Health', cell: (ep) => <HealthBadge scope={scope} ep={ep} /> },
                {
                  label: 'Event types',
                  cell: (ep) => (ep.filterTypes === null ? <span class="muted">all</span> : ep.filterTypes.join(', ')),
                },
                { label: 'Id', cell: (ep) => <CopyId id={ep.id} label="endpoint id" /> },
                { label: 'Created', cell: (ep) => <Time iso={ep.createdAt} /> },
              ]}
            />
          )
        }
      </Show>
      <Pager page={list.data} at={iterator} onPage={setIterator} />
      {scope.canWrite ? (
        <CreateEndpoint scope={scope} onCreated={(ep) => navigate(`${scope.base}/endpoints/${seg(ep.id)}`)} />
      ) : null}
    </>
  );
}
