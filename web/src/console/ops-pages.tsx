import { useState } from 'preact/hooks';
import { api, get, query, seg, type Page } from '../shared/api.ts';
import type { ApiKey, Setting, Task } from '../shared/types.ts';
import { Action, Badge, CopyId, Empty, ErrorBox, Loading, Pager, Pre, Time, Title, useLoad } from '../shared/ui.tsx';

/** A task's progress counters as text. */
export function progress(t: Task): string {
  const d = t.data;
  const parts = ['messagesSent', 'scanned', 'alreadyQueued', 'unavailable', 'expunged'].filter((k) => typeof d[k] === 'number').map((k) => `${k.replace(/([A-Z])/g, ' $1').toLowerCase()}: ${String(d[k])}`);
  if (typeof d.error === 'string') parts.push(`error: ${d.error}`);
  return parts.join(' · ') || '—';
}

/** Background tasks (recover, replay, erasure) with progress, refreshed while any runs. */
export function TasksPage() {
  const [status, setStatus] = useState('');
  const [iterator, setIterator] = useState<string | null>(null);
  const list = useLoad(() => get<Page<Task>>(`/api/v1/background-task${query({ limit: 25, status, iterator })}`), [status, iterator], 2000);
  return (
    <>
      <Title sub="Recover, replay and erasure tasks, newest first.">Background tasks</Title>
      <label>Status <select value={status} onChange={(e) => { setIterator(null); setStatus((e.target as HTMLSelectElement).value); }}><option value="">any</option><option>running</option><option>finished</option><option>failed</option></select></label>
      <ErrorBox error={list.error} />
      {list.data === undefined ? <Loading /> : list.data.data.length === 0 ? <Empty title="No tasks.">Tasks start from an endpoint's recover or replay, or from bulk replay on the dead-letter page.</Empty> : (
        <table>
          <thead><tr><th scope="col">Task</th><th scope="col">Status</th><th scope="col">Progress</th><th scope="col">Id</th><th scope="col">Updated</th></tr></thead>
          <tbody>{list.data.data.map((t) => <tr key={t.id}><td>{t.task}</td><td><Badge state={t.status} /></td><td>{progress(t)}</td><td><CopyId id={t.id} label="task id" /></td><td><Time iso={t.updatedAt} /></td></tr>)}</tbody>
        </table>
      )}
      <Pager page={list.data} at={iterator} onPage={setIterator} />
    </>
  );
}

/** API keys: create (token shown once), list, revoke. */
export function ApiKeysPage() {
  const [iterator, setIterator] = useState<string | null>(null);
  const list = useLoad(() => get<Page<ApiKey>>(`/api/v1/api-key${query({ limit: 50, iterator })}`), [iterator]);
  const [name, setName] = useState('');
  const [appId, setAppId] = useState('');
  const [readOnly, setReadOnly] = useState(false);
  const [created, setCreated] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const create = async (e: Event): Promise<void> => {
    e.preventDefault();
    setError(null);
    try {
      const k = await api<ApiKey & { token: string }>('POST', '/api/v1/api-key', { name, appId: appId === '' ? null : appId, readOnly });
      setCreated(k.token);
      setName('');
      list.reload();
    } catch (err) { setError(err); }
  };
  return (
    <>
      <Title sub="Operator keys can do everything; application keys act on one application, optionally read-only.">API keys</Title>
      {created === null ? null : (
        <div class="card notice" role="status">
          <p><strong>Copy this token now:</strong> it is shown once (only its hash is kept).</p>
          <Pre label="New API token" text={created} />
          <div class="row"><button type="button" onClick={() => void navigator.clipboard.writeText(created)}>Copy token</button><button type="button" onClick={() => setCreated(null)}>Done</button></div>
        </div>
      )}
      <ErrorBox error={list.error} />
      {list.data === undefined ? <Loading /> : list.data.data.length === 0 ? <Empty title="No API keys yet.">Create one below for a service or a customer.</Empty> : (
        <table>
          <thead><tr><th scope="col">Name</th><th scope="col">Scope</th><th scope="col">Token starts</th><th scope="col">Created</th><th scope="col">Expires / revoked</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
          <tbody>{list.data.data.map((k) => (
            <tr key={k.id}>
              <td>{k.name}<div><CopyId id={k.id} label="key id" /></div></td>
              <td>{k.role === 'admin' ? 'operator' : <>app <code>{k.appId}</code></>}{k.readOnly ? ' · read-only' : ''}</td>
              <td><code>{k.tokenPrefix}…</code></td>
              <td><Time iso={k.createdAt} /></td>
              <td>{k.revokedAt !== null ? <>revoked <Time iso={k.revokedAt} /></> : k.expiresAt !== null ? <Time iso={k.expiresAt} /> : <span class="muted">never</span>}</td>
              <td>{k.revokedAt === null ? <Action label={`Revoke ${k.name}`} danger confirm={`Revoke ${k.name}? It stops working at once.`} run={async () => { await api('DELETE', `/api/v1/api-key/${seg(k.id)}`); list.reload(); }} /> : null}</td>
            </tr>
          ))}</tbody>
        </table>
      )}
      <Pager page={list.data} at={iterator} onPage={setIterator} />
      <form class="card form" onSubmit={(e) => void create(e)} aria-label="Create an API key">
        <h2>Create an API key</h2>
        <label>Name <input required value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} /></label>
        <label>Application id or uid (empty = operator key) <input value={appId} onInput={(e) => setAppId((e.target as HTMLInputElement).value)} /></label>
        <label class="inline"><input type="checkbox" checked={readOnly} onChange={(e) => setReadOnly((e.target as HTMLInputElement).checked)} /> Read-only (application keys)</label>
        <button type="submit" class="primary">Create key</button>
        <ErrorBox error={error} />
      </form>
    </>
  );
}

/** The effective configuration, secrets masked. */
export function SettingsPage() {
  const list = useLoad(() => get<{ data: Setting[] }>('/api/v1/settings'), []);
  const [filter, setFilter] = useState('');
  const rows = (list.data?.data ?? []).filter((s) => `${s.env} ${s.description}`.toLowerCase().includes(filter.toLowerCase()));
  return (
    <>
      <Title sub="Read from the environment at start-up; secrets are masked. Change them in the environment and restart.">Settings</Title>
      <label>Search <input type="search" value={filter} onInput={(e) => setFilter((e.target as HTMLInputElement).value)} /></label>
      <ErrorBox error={list.error} />
      {list.data === undefined ? <Loading /> : (
        <table>
          <thead><tr><th scope="col">Variable</th><th scope="col">Value</th><th scope="col">Default</th><th scope="col">Meaning</th></tr></thead>
          <tbody>{rows.map((s) => (
            <tr key={s.env}>
              <td><code>{s.env}</code></td>
              <td>{s.value === null ? <span class="muted">unset</span> : <code>{s.value}</code>}{!s.isDefault && !s.secret ? <> <Badge state="changed" /></> : null}</td>
              <td>{s.defaultValue === null ? <span class="muted">unset</span> : <code>{s.defaultValue === '' ? '(empty)' : s.defaultValue}</code>}</td>
              <td>{s.description} <span class="muted">({s.unit})</span></td>
            </tr>
          ))}</tbody>
        </table>
      )}
    </>
  );
}
