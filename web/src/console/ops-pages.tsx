import { useState } from 'preact/hooks';
import { client, ok } from '../shared/api.ts';
import { progress } from '../shared/task-progress.ts';
import type { Task } from '../shared/types.ts';
import { DataTable } from '../shared/table.tsx';
import { Action, Badge, CopyId, Empty, ErrorBox, Pager, Pre, Show, Time, Title, useLoad } from '../shared/ui.tsx';

const TASK_STATES: readonly Task['status'][] = ['running', 'finished', 'failed'];

/** Background tasks (recover, replay, erasure) with progress, refreshed while any runs. */
export function TasksPage() {
  const [status, setStatus] = useState('');
  const [iterator, setIterator] = useState<string | null>(null);
  const list = useLoad(
    () => {
      const state = TASK_STATES.find((s) => s === status);
      return ok(client.GET('/api/v1/background-task', { params: { query: { limit: '25', status: state, iterator } } }));
    },
    [status, iterator],
    2000,
  );
  return (
    <>
      <Title sub="Recover, replay and erasure tasks, newest first.">Background tasks</Title>
      <label>
        Status{' '}
        <select
          value={status}
          onChange={(e) => {
            setIterator(null);
            setStatus((e.target as HTMLSelectElement).value);
          }}
        >
          <option value="">any</option>
          <option>running</option>
          <option>finished</option>
          <option>failed</option>
        </select>
      </label>
      <Show of={list}>
        {(page) =>
          page.data.length === 0 ? (
            <Empty title="No tasks.">
              Tasks start from an endpoint's recover or replay, or from bulk replay on the dead-letter page.
            </Empty>
          ) : (
            <DataTable
              rows={page.data}
              rowKey={(t) => t.id}
              columns={[
                { label: 'Task', cell: (t) => t.task },
                { label: 'Status', cell: (t) => <Badge state={t.status} /> },
                { label: 'Progress', cell: (t) => progress(t) },
                { label: 'Id', cell: (t) => <CopyId id={t.id} label="task id" /> },
                { label: 'Updated', cell: (t) => <Time iso={t.updatedAt} /> },
              ]}
            />
          )
        }
      </Show>
      <Pager page={list.data} at={iterator} onPage={setIterator} />
    </>
  );
}

/** API keys: create (token shown once), list, revoke. */
export function ApiKeysPage() {
  const [iterator, setIterator] = useState<string | null>(null);
  const list = useLoad(
    () => ok(client.GET('/api/v1/api-key', { params: { query: { limit: '50', iterator } } })),
    [iterator],
  );
  const [name, setName] = useState('');
  const [appId, setAppId] = useState('');
  const [readOnly, setReadOnly] = useState(false);
  const [created, setCreated] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const create = async (e: Event): Promise<void> => {
    e.preventDefault();
    setError(null);
    try {
      const k = await ok(
        client.POST('/api/v1/api-key', { body: { name, appId: appId === '' ? null : appId, readOnly } }),
      );
      setCreated(k.token);
      setName('');
      list.reload();
    } catch (err) {
      setError(err);
    }
  };
  return (
    <>
      <Title sub="Operator keys can do everything; application keys act on one application, optionally read-only.">
        API keys
      </Title>
      {created === null ? null : (
        <div class="card notice" role="status">
          <p>
            <strong>Copy this token now:</strong> it is shown once (only its hash is kept).
          </p>
          <Pre label="New API token" text={created} />
          <div class="row">
            <button type="button" onClick={() => void navigator.clipboard.writeText(created)}>
              Copy token
            </button>
            <button type="button" onClick={() => setCreated(null)}>
              Done
            </button>
          </div>
        </div>
      )}
      <Show of={list}>
        {(page) =>
          page.data.length === 0 ? (
            <Empty title="No API keys yet.">Create one below for a service or a customer.</Empty>
          ) : (
            <DataTable
              rows={page.data}
              rowKey={(k) => k.id}
              columns={[
                {
                  label: 'Name',
                  cell: (k) => (
                    <>
                      {k.name}
                      <div>
                        <CopyId id={k.id} label="key id" />
                      </div>
                    </>
                  ),
                },
                {
                  label: 'Scope',
                  cell: (k) => (
                    <>
                      {k.role === 'admin' ? (
                        'operator'
                      ) : (
                        <>
                          app <code>{k.appId}</code>
                        </>
                      )}
                      {k.readOnly ? ' · read-only' : ''}
                    </>
                  ),
                },
                { label: 'Token starts', cell: (k) => <code>{k.tokenPrefix}…</code> },
                { label: 'Created', cell: (k) => <Time iso={k.createdAt} /> },
                {
                  label: 'Expires / revoked',
                  cell: (k) =>
                    k.revokedAt !== null ? (
                      <>
                        revoked <Time iso={k.revokedAt} />
                      </>
                    ) : k.expiresAt !== null ? (
                      <Time iso={k.expiresAt} />
                    ) : (
                      <span class="muted">never</span>
                    ),
                },
                {
                  label: 'Actions',
                  hideLabel: true,
                  cell: (k) =>
                    k.revokedAt === null ? (
                      <Action
                        label={`Revoke ${k.name}`}
                        danger
                        confirm={{
                          title: `Revoke the API key ${k.name}?`,
                          yes: 'Revoke key',
                          body: (
                            <p>
                              Key <code>{k.id}</code> ({k.tokenPrefix}…) stops working at once; whatever uses it gets
                              401.
                            </p>
                          ),
                        }}
                        run={async () => {
                          await ok(client.DELETE('/api/v1/api-key/{keyId}', { params: { path: { keyId: k.id } } }));
                          list.reload();
                        }}
                      />
                    ) : null,
                },
              ]}
            />
          )
        }
      </Show>
      <Pager page={list.data} at={iterator} onPage={setIterator} />
      <form class="card form" onSubmit={(e) => void create(e)} aria-label="Create an API key">
        <h2>Create an API key</h2>
        <label>
          Name <input required value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} />
        </label>
        <label>
          Application id or uid (empty = operator key){' '}
          <input value={appId} onInput={(e) => setAppId((e.target as HTMLInputElement).value)} />
        </label>
        <label class="inline">
          <input
            type="checkbox"
            checked={readOnly}
            onChange={(e) => setReadOnly((e.target as HTMLInputElement).checked)}
          />{' '}
          Read-only (application keys)
        </label>
        <button type="submit" class="primary">
          Create key
        </button>
        <ErrorBox error={error} />
      </form>
    </>
  );
}

/** Milliseconds in the largest unit that writes them whole: 1 d, 30 min, 5 s, 50 ms. */
export function humanMs(ms: number): string {
  for (const [unit, size] of [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['min', 60_000],
    ['s', 1000],
  ] as const)
    if (ms >= size && ms % size === 0) return `${ms / size} ${unit}`;
  return ms >= 1000 ? `${ms / 1000} s` : `${ms} ms`;
}

/**
 * A setting's text in the units people read: durations — the effective value in ms, the default as written
 * (`5s`) — both shown by {@link humanMs}, so a value and its default compare at a glance.
 */
export function settingText(text: string, unit: string): string {
  if (unit !== 'duration' && unit !== 'durations') return text;
  return text
    .split(',')
    .map((part) => {
      const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$/.exec(part);
      if (m === null) return part.trim();
      const factor = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[m[2] ?? 'ms'] ?? 1;
      return humanMs(Math.round(Number(m[1]) * factor));
    })
    .join(', ');
}

/** An environment variable's name, breakable only after its underscores (never mid-word). */
const EnvName = ({ name }: { name: string }) => (
  <code class="env">
    {name.split('_').map((part, i) =>
      i === 0 ? (
        part
      ) : (
        <>
          _<wbr />
          {part}
        </>
      ),
    )}
  </code>
);

/** The effective configuration, secrets masked, durations in the same units as their defaults. */
/** What the settings page says under its title. */
const SETTINGS_NOTE =
  'Read from the environment at start-up; secrets are masked. Change them in the environment and restart.';

export function SettingsPage() {
  const list = useLoad(() => ok(client.GET('/api/v1/settings')), []);
  const [filter, setFilter] = useState('');
  const rows = (list.data?.data ?? []).filter((s) =>
    `${s.env} ${s.description}`.toLowerCase().includes(filter.toLowerCase()),
  );
  return (
    <>
      <Title sub={SETTINGS_NOTE}>Settings</Title>
      <label>
        Search <input type="search" value={filter} onInput={(e) => setFilter((e.target as HTMLInputElement).value)} />
      </label>
      <Show of={list}>
        {() => (
          <DataTable
            class="settings"
            rows={rows}
            rowKey={(s) => s.env}
            columns={[
              { label: 'Variable', cell: (s) => <EnvName name={s.env} /> },
              {
                label: 'Value',
                cell: (s) => (
                  <>
                    {s.value === null ? <span class="muted">unset</span> : <code>{settingText(s.value, s.unit)}</code>}
                    {!s.isDefault && !s.secret ? (
                      <>
                        {' '}
                        <Badge state="changed" />
                      </>
                    ) : null}
                  </>
                ),
              },
              {
                label: 'Default',
                cell: (s) =>
                  s.defaultValue === null ? (
                    <span class="muted">unset</span>
                  ) : (
                    <code>{s.defaultValue === '' ? '(empty)' : settingText(s.defaultValue, s.unit)}</code>
                  ),
              },
              {
                label: 'Meaning',
                cell: (s) => (
                  <>
                    {s.description} <span class="muted">({s.unit})</span>
                  </>
                ),
              },
            ]}
          />
        )}
      </Show>
    </>
  );
}
