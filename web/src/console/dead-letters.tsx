import { useState } from 'preact/hooks';
import { api, get, query, seg, type Page } from '../shared/api.ts';
import { href } from '../shared/router.ts';
import type { DeadLetter, Endpoint, Scope, Task } from '../shared/types.ts';
import { Badge, CopyId, Empty, ErrorBox, Loading, Pager, Time, Title, useLoad } from '../shared/ui.tsx';
import { progress } from './ops-pages.tsx';

const isoOf = (local: string): string | undefined => (local === '' ? undefined : new Date(`${local}Z`).toISOString());

/** The live progress of one replay task. */
function TaskProgress({ id }: { id: string }) {
  const task = useLoad(() => get<Task>(`/api/v1/background-task/${seg(id)}`), [id], 1000);
  return (
    <div class="card notice" role="status" aria-live="polite">
      <p><strong>Replay task</strong> <CopyId id={id} label="task id" /> {task.data === undefined ? '…' : <Badge state={task.data.status} />}</p>
      {task.data === undefined ? null : <p class="task-progress">{progress(task.data)}</p>}
      <ErrorBox error={task.error} />
    </div>
  );
}

/** Dead letters of an application, filtered; replay the selected ones (or all that match). */
export function DeadLettersPage({ scope, rate }: { scope: Scope; rate: string | null }) {
  const [f, setF] = useState({ endpoint: '', eventType: '', reason: '', after: '', before: '' });
  const [applied, setApplied] = useState(f);
  const [iterator, setIterator] = useState<string | null>(null);
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [tasks, setTasks] = useState<string[]>([]);
  const [error, setError] = useState<unknown>(null);
  const endpoints = useLoad(() => get<Page<Endpoint>>(`/api/v1/app/${seg(scope.appId)}/endpoint?limit=250`), [scope.appId]);
  const a = applied;
  const path = a.endpoint === '' ? `/api/v1/app/${seg(scope.appId)}/dead-letter` : `/api/v1/app/${seg(scope.appId)}/endpoint/${seg(a.endpoint)}/dead-letter`;
  const list = useLoad(() => get<Page<DeadLetter>>(`${path}${query({ limit: 50, iterator, event_types: a.eventType === '' ? undefined : [a.eventType], after: isoOf(a.after), before: isoOf(a.before) })}`), [path, JSON.stringify(a), iterator], 3000);
  const rows = (list.data?.data ?? []).filter((d) => a.reason === '' || d.reason === a.reason);
  const key = (d: DeadLetter): string => `${d.msgId}/${d.endpointId}`;
  const toggle = (d: DeadLetter): void => { const next = new Set(selected); if (next.has(key(d))) next.delete(key(d)); else next.add(key(d)); setSelected(next); };
  const replay = async (targets: DeadLetter[] | null): Promise<void> => {
    setError(null);
    try {
      const started: string[] = [];
      if (targets === null) {
        const t = await api<{ id: string }>('POST', `/api/v1/app/${seg(scope.appId)}/dead-letter/replay`, { since: isoOf(a.after) ?? '1970-01-01T00:00:00.000Z', until: isoOf(a.before) ?? null, endpointId: a.endpoint === '' ? null : a.endpoint, eventTypes: a.eventType === '' ? null : [a.eventType] });
        started.push(t.id);
      } else {
        for (const d of targets) {
          const at = new Date(d.msgTimestamp).getTime();
          const t = await api<{ id: string }>('POST', `/api/v1/app/${seg(scope.appId)}/dead-letter/replay`, { since: new Date(at).toISOString(), until: new Date(at + 1).toISOString(), endpointId: d.endpointId, eventTypes: [d.eventType] });
          started.push(t.id);
        }
      }
      setTasks(started.slice(-5));
      setSelected(new Set());
    } catch (err) { setError(err); }
  };
  const set = (k: keyof typeof f) => (e: Event) => setF({ ...f, [k]: (e.target as HTMLInputElement).value });
  const chosen = rows.filter((d) => selected.has(key(d)));
  return (
    <>
      <Title sub={`Deliveries that ended without success. Replays go back to pending, paced at ${rate ?? 'TIDINGS_REPLAY_RATE'} requests/s per endpoint (TIDINGS_REPLAY_RATE).`}>Dead letters</Title>
      <form class="filters" aria-label="Filter dead letters" onSubmit={(e) => { e.preventDefault(); setIterator(null); setApplied(f); }}>
        <label>Endpoint <select value={f.endpoint} onChange={set('endpoint')}><option value="">all</option>{(endpoints.data?.data ?? []).map((ep) => <option key={ep.id} value={ep.id}>{ep.url}</option>)}</select></label>
        <label>Event type <input value={f.eventType} onInput={set('eventType')} /></label>
        <label>Reason <select value={f.reason} onChange={set('reason')}><option value="">any</option><option>exhausted</option><option>gone</option><option>lease_lost_repeatedly</option></select></label>
        <label>After (UTC) <input type="datetime-local" value={f.after} onInput={set('after')} /></label>
        <label>Before (UTC) <input type="datetime-local" value={f.before} onInput={set('before')} /></label>
        <button type="submit">Apply filters</button>
      </form>
      <div class="toolbar">
        <button type="button" class="primary" disabled={chosen.length === 0} onClick={() => void replay(chosen)}>Replay selected ({chosen.length})</button>
        <button type="button" disabled={rows.length === 0} onClick={() => void replay(null)}>Replay all matching</button>
      </div>
      <ErrorBox error={error} />
      {tasks.map((id) => <TaskProgress key={id} id={id} />)}
      <ErrorBox error={list.error} />
      {list.data === undefined ? <Loading /> : rows.length === 0 ? <Empty title="No dead letters.">Nothing failed for good here. When a delivery runs out of attempts it shows up on this page, ready to replay.</Empty> : (
        <table>
          <thead><tr><th scope="col"><span class="sr-only">Select</span></th><th scope="col">Event type</th><th scope="col">Reason</th><th scope="col">Last attempt</th><th scope="col">Dead since</th><th scope="col">Message</th><th scope="col">Timeline</th></tr></thead>
          <tbody>{rows.map((d) => (
            <tr key={key(d)}>
              <td><input type="checkbox" aria-label={`Select ${d.msgId} to ${d.endpointId}`} checked={selected.has(key(d))} onChange={() => toggle(d)} /></td>
              <td>{d.eventType}</td>
              <td><Badge state="dead" /> {d.reason ?? '—'}</td>
              <td>{d.attemptCount} attempts · {d.lastStatusCode ?? '—'} {d.lastErrorKind ?? ''}</td>
              <td><Time iso={d.deadAt} /></td>
              <td><CopyId id={d.msgId} label="message id" /></td>
              <td><a href={href(`${scope.base}/messages/${seg(d.msgId)}/endpoints/${seg(d.endpointId)}`)}>Timeline</a></td>
            </tr>
          ))}</tbody>
        </table>
      )}
      <Pager page={list.data} at={iterator} onPage={setIterator} />
    </>
  );
}
