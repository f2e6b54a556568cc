import { useState } from 'preact/hooks';
import { client, ok } from '../shared/api.ts';
import { href, seg } from '../shared/router.ts';
import { DataTable, type Column } from '../shared/table.tsx';
import type { DeadLetter, Endpoint, PostBody } from '../shared/types.ts';
import { Action, Badge, CopyId, Empty, ErrorBox, Pager, Show, Time, Title, useLoad } from '../shared/ui.tsx';
import { progress } from '../shared/task-progress.ts';

const isoOf = (local: string): string | undefined => (local === '' ? undefined : new Date(`${local}Z`).toISOString());
const appOf = (d: DeadLetter, appId: string | null): string => appId ?? d.appId ?? '';
const REASONS = ['exhausted', 'gone', 'lease_lost_repeatedly'];

/** The live progress of one replay task. */
function TaskProgress({ id }: { id: string }) {
  const task = useLoad(
    () => ok(client.GET('/api/v1/background-task/{taskId}', { params: { path: { taskId: id } } })),
    [id],
    1000,
  );
  return (
    <div class="card notice" role="status" aria-live="polite">
      <p>
        <strong>Replay task</strong> <CopyId id={id} label="task id" />{' '}
        {task.data === undefined ? '…' : <Badge state={task.data.status} />}
      </p>
      {task.data === undefined ? null : <p class="task-progress">{progress(task.data)}</p>}
      <ErrorBox error={task.error} />
    </div>
  );
}

interface Filters {
  endpoint: string;
  eventType: string;
  reason: string;
  after: string;
  before: string;
}
const NONE: Filters = { endpoint: '', eventType: '', reason: '', after: '', before: '' };

/** The filter form; the endpoint choice exists within one application only. */
function FilterForm({ endpoints, onApply }: { endpoints: Endpoint[] | null; onApply: (f: Filters) => void }) {
  const [f, setF] = useState(NONE);
  const set =
    (k: keyof Filters) =>
    (e: Event): void =>
      setF({ ...f, [k]: (e.target as HTMLInputElement).value });
  return (
    <form
      class="filters"
      aria-label="Filter dead letters"
      onSubmit={(e) => {
        e.preventDefault();
        onApply(f);
      }}
    >
      {endpoints === null ? null : (
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
      )}
      <label>
        Event type <input value={f.eventType} onInput={set('eventType')} />
      </label>
      <label>
        Reason (this page){' '}
        <select value={f.reason} onChange={set('reason')}>
          <option value="">any</option>
          {REASONS.map((r) => (
            <option key={r}>{r}</option>
          ))}
        </select>
      </label>
      <label>
        After (UTC) <input type="datetime-local" value={f.after} onInput={set('after')} />
      </label>
      <label>
        Before (UTC) <input type="datetime-local" value={f.before} onInput={set('before')} />
      </label>
      <button type="submit">Apply filters</button>
    </form>
  );
}

/** What "replay all matching" replays, one filter a line, for its confirmation dialog. */
function describe(a: Filters, appName: string, epUrl: string | undefined): string[] {
  return [
    `application ${appName}`,
    a.endpoint === '' ? 'every endpoint' : `endpoint ${epUrl ?? a.endpoint}`,
    a.eventType === '' ? 'every event type' : `event type ${a.eventType}`,
    a.after === '' && a.before === ''
      ? 'messages of any time'
      : (
          'messages created ' +
          `${a.after === '' ? '' : `after ${a.after} UTC `}${a.before === '' ? '' : `before ${a.before} UTC`}`
        ).trim(),
  ];
}

/**
 * Dead letters of one application (`appId`), or of every application (`appId` null, operator): filtered,
 * with their endpoint; replay the selected ones, or (within one application) all that match, after a
 * dialog naming the selection.
 */
export function DeadLettersPage({ appId, rate }: { appId: string | null; rate: string | null }) {
  const [a, setApplied] = useState(NONE);
  const [iterator, setIterator] = useState<string | null>(null);
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [tasks, setTasks] = useState<string[]>([]);
  const [error, setError] = useState<unknown>(null);
  const endpoints = useLoad(
    () =>
      appId === null
        ? Promise.resolve(null)
        : ok(client.GET('/api/v1/app/{appId}/endpoint', { params: { path: { appId }, query: { limit: '250' } } })).then(
            (p) => p.data,
          ),
    [appId],
  );
  const apps = useLoad(
    () => ok(client.GET('/api/v1/app', { params: { query: { limit: '250' } } })).then((p) => p.data),
    [],
  );
  const list = useLoad(
    () => {
      const eventTypes = a.eventType === '' ? undefined : [a.eventType];
      const query = { limit: '50', iterator, event_types: eventTypes, after: isoOf(a.after), before: isoOf(a.before) };
      if (appId === null) return ok(client.GET('/api/v1/dead-letter', { params: { query } }));
      if (a.endpoint === '')
        return ok(client.GET('/api/v1/app/{appId}/dead-letter', { params: { path: { appId }, query } }));
      const path = { appId, endpointId: a.endpoint };
      return ok(client.GET('/api/v1/app/{appId}/endpoint/{endpointId}/dead-letter', { params: { path, query } }));
    },
    [appId, JSON.stringify(a), iterator],
    3000,
  );
  const rows = (list.data?.data ?? []).filter((d) => a.reason === '' || d.reason === a.reason);
  const urlOf = new Map((endpoints.data ?? []).map((ep) => [ep.id, ep.url]));
  const nameOf = new Map((apps.data ?? []).map((x) => [x.id, x.name]));
  const key = (d: DeadLetter): string => `${appOf(d, appId)}/${d.msgId}/${d.endpointId}`;
  const toggle = (d: DeadLetter): void => {
    const next = new Set(selected);
    if (next.has(key(d))) next.delete(key(d));
    else next.add(key(d));
    setSelected(next);
  };
  const start = async (app: string, body: PostBody<'/api/v1/app/{appId}/dead-letter/replay'>): Promise<string> =>
    (await ok(client.POST('/api/v1/app/{appId}/dead-letter/replay', { params: { path: { appId: app } }, body }))).id;
  const replay = async (targets: DeadLetter[] | null): Promise<void> => {
    setError(null);
    try {
      const started: string[] = [];
      if (targets === null && appId !== null) {
        started.push(
          await start(appId, {
            since: isoOf(a.after) ?? '1970-01-01T00:00:00.000Z',
            until: isoOf(a.before) ?? null,
            endpointId: a.endpoint === '' ? null : a.endpoint,
            eventTypes: a.eventType === '' ? null : [a.eventType],
          }),
        );
      }
      for (const d of targets ?? []) {
        const at = new Date(d.msgTimestamp).getTime();
        started.push(
          await start(appOf(d, appId), {
            since: new Date(at).toISOString(),
            until: new Date(at + 1).toISOString(),
            endpointId: d.endpointId,
            eventTypes: [d.eventType],
          }),
        );
      }
      setTasks(started.slice(-5));
      setSelected(new Set());
    } catch (err) {
      setError(err);
    }
  };
  const chosen = rows.filter((d) => selected.has(key(d)));
  const columns: Column<DeadLetter>[] = [
    {
      label: 'Select',
      hideLabel: true,
      cell: (d) => (
        <input
          type="checkbox"
          aria-label={`Select ${d.msgId} to ${d.endpointId}`}
          checked={selected.has(key(d))}
          onChange={() => toggle(d)}
        />
      ),
    },
    ...(appId === null
      ? [
          {
            label: 'Application',
            cell: (d: DeadLetter) => (
              <a href={href(`/apps/${seg(appOf(d, null))}/dead-letters`)}>
                {nameOf.get(appOf(d, null)) ?? appOf(d, null)}
              </a>
            ),
          },
        ]
      : []),
    {
      label: 'Endpoint',
      cell: (d) => (
        <>
          <a href={href(`/apps/${seg(appOf(d, appId))}/endpoints/${seg(d.endpointId)}`)}>
            {urlOf.get(d.endpointId) ?? d.endpointId}
          </a>
          {urlOf.has(d.endpointId) ? (
            <div>
              <CopyId id={d.endpointId} label="endpoint id" />
            </div>
          ) : null}
        </>
      ),
    },
    { label: 'Event type', cell: (d) => d.eventType },
    {
      label: 'Reason',
      cell: (d) => (
        <>
          <Badge state="dead" /> {d.reason ?? '—'}
        </>
      ),
    },
    {
      label: 'Last attempt',
      cell: (d) => `${d.attemptCount} attempts · ${d.lastStatusCode ?? '—'} ${d.lastErrorKind ?? ''}`,
    },
    { label: 'Dead since', cell: (d) => <Time iso={d.deadAt} /> },
    { label: 'Message', cell: (d) => <CopyId id={d.msgId} label="message id" /> },
    {
      label: 'Timeline',
      cell: (d) => (
        <a href={href(`/apps/${seg(appOf(d, appId))}/messages/${seg(d.msgId)}/endpoints/${seg(d.endpointId)}`)}>
          Timeline
        </a>
      ),
    },
  ];
  const appName = appId === null ? '' : (nameOf.get(appId) ?? appId);
  return (
    <>
      <Title
        sub={
          `Deliveries that ended without success${appId === null ? ', in every application' : ''}. Replays go ` +
          `back to pending, paced at ${rate ?? 'TIDINGS_REPLAY_RATE'} requests/s per endpoint ` +
          '(TIDINGS_REPLAY_RATE).'
        }
      >
        {appId === null ? 'Dead letters, all applications' : 'Dead letters'}
      </Title>
      <FilterForm
        endpoints={appId === null ? null : (endpoints.data ?? [])}
        onApply={(f) => {
          setIterator(null);
          setSelected(new Set());
          setApplied(f);
        }}
      />
      <div class="toolbar">
        <button type="button" class="primary" disabled={chosen.length === 0} onClick={() => void replay(chosen)}>
          Replay selected ({chosen.length})
        </button>
        {appId === null ? (
          <p class="muted">To replay everything that matches a filter, open one application's dead letters.</p>
        ) : a.reason !== '' ? (
          <p class="muted">"Replay all matching" ignores the reason: clear that filter to use it.</p>
        ) : (
          <Action
            label="Replay all matching"
            disabled={rows.length === 0}
            run={() => replay(null)}
            confirm={{
              title: `Replay all matching dead letters of ${appName}?`,
              yes: 'Replay all matching',
              body: (
                <>
                  <p>
                    Every dead letter that matches goes back to pending, not only the {rows.length} shown on this page:
                  </p>
                  <ul>
                    {describe(a, appName, urlOf.get(a.endpoint)).map((line) => (
                      <li key={line}>{line}</li>
                    ))}
                  </ul>
                  <p>Their receivers get these messages again.</p>
                </>
              ),
            }}
          />
        )}
      </div>
      <ErrorBox error={error} />
      {tasks.map((id) => (
        <TaskProgress key={id} id={id} />
      ))}
      <Show of={list}>
        {() =>
          rows.length === 0 ? (
            <Empty title="No dead letters.">
              Nothing failed for good here. When a delivery runs out of attempts it shows up on this page, ready to
              replay.
            </Empty>
          ) : (
            <DataTable columns={columns} rows={rows} rowKey={key} />
          )
        }
      </Show>
      <Pager page={list.data} at={iterator} onPage={setIterator} />
    </>
  );
}
