import { useState } from 'preact/hooks';
import { api, get, query, seg, type Page } from './api.ts';
import { DeliveryTools, EditEndpoint, HeadersEditor, LimitsEditor, SecretTools } from './endpoint-tools.tsx';
import { href } from './router.ts';
import type { Attempt, Endpoint, Health, Scope } from './types.ts';
import { Action, Badge, Bars, CopyId, Empty, ErrorBox, Loading, Pager, Time, Title, useLoad } from './ui.tsx';

const windowName = (s: number): string => (s >= 3600 ? `${s / 3600} h` : `${s / 60} min`);

/** Breaker, failing since, counters, charts per window and the health history. */
function HealthView({ health }: { health: Health }) {
  return (
    <section class="card" aria-labelledby="health-h">
      <h2 id="health-h">Health</h2>
      <dl class="facts">
        <dt>Status</dt><dd><Badge state={health.status} />{health.statusReason === null ? null : <span class="muted"> {health.statusReason}</span>}</dd>
        <dt>Breaker</dt><dd><Badge state={health.breaker.state} /> {health.breaker.consecutiveFailures} failures in a row{health.breaker.openUntil === null ? null : <> · open until <Time iso={health.breaker.openUntil} /></>}</dd>
        <dt>Failing since</dt><dd><Time iso={health.failingSince} /></dd>
        <dt>Last success</dt><dd><Time iso={health.lastSuccessAt} /></dd>
        <dt>In flight now</dt><dd>{health.inFlight} · {health.currentRatePerS.toFixed(1)} requests/s</dd>
        <dt>Deliveries</dt><dd>{Object.entries(health.deliveries).map(([k, v]) => <span key={k} class="count"><Badge state={k} /> {v}</span>)}</dd>
      </dl>
      <div class="charts">
        <Bars title="Success ratio" max={1} rows={health.windows.map((w) => ({ label: windowName(w.windowS), value: w.successRatio }))} format={(v) => `${(v * 100).toFixed(1)} %`} />
        <Bars title="Latency p50 (ms)" rows={health.windows.map((w) => ({ label: windowName(w.windowS), value: w.p50LatencyMs }))} format={(v) => `${Math.round(v)} ms`} />
        <Bars title="Latency p99 (ms)" rows={health.windows.map((w) => ({ label: windowName(w.windowS), value: w.p99LatencyMs }))} format={(v) => `${Math.round(v)} ms`} />
      </div>
      <h3>History</h3>
      {health.history.length === 0 ? <p class="muted">No breaker or status changes yet.</p> : (
        <ol class="history">{health.history.map((h) => <li key={`${h.at}-${h.kind}`}><Time iso={h.at} /> <strong>{h.kind.replaceAll('_', ' ')}</strong>{h.reason === null ? null : ` — ${h.reason}`}</li>)}</ol>
      )}
    </section>
  );
}

/** The latest attempts to this endpoint, each linking to its delivery timeline. */
export function AttemptTable({ scope, attempts, showEndpoint }: { scope: Scope; attempts: Attempt[]; showEndpoint: boolean }) {
  return (
    <table>
      <thead><tr><th scope="col">When</th><th scope="col">Result</th><th scope="col">Status</th><th scope="col">Latency</th><th scope="col">Error kind</th><th scope="col">{showEndpoint ? 'Endpoint' : 'Message'}</th><th scope="col">Timeline</th></tr></thead>
      <tbody>
        {attempts.map((a) => (
          <tr key={a.id}>
            <td><Time iso={a.timestamp} /></td>
            <td><Badge state={a.statusText} /> #{a.attemptNumber}{a.triggerType === 1 ? ' (manual)' : ''}</td>
            <td>{a.responseStatusCode === 0 ? '—' : a.responseStatusCode}</td>
            <td>{a.responseDurationMs} ms</td>
            <td>{a.errorKind ?? '—'}</td>
            <td><CopyId id={showEndpoint ? a.endpointId : a.msgId} /></td>
            <td><a href={href(`${scope.base}/messages/${seg(a.msgId)}/endpoints/${seg(a.endpointId)}`)} aria-label={`Timeline of ${a.msgId} to ${a.endpointId}`}>Timeline</a></td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** One endpoint: health, charts, controls, attempts. */
export function EndpointDetail({ scope, endpointId }: { scope: Scope; endpointId: string }) {
  const path = `/api/v1/app/${seg(scope.appId)}/endpoint/${seg(endpointId)}`;
  const ep = useLoad(() => get<Endpoint>(path), [path]);
  const health = useLoad(() => get<Health>(`${path}/health`), [path], 5000);
  const [iterator, setIterator] = useState<string | null>(null);
  const attempts = useLoad(() => get<Page<Attempt>>(`/api/v1/app/${seg(scope.appId)}/attempt/endpoint/${seg(endpointId)}${query({ limit: 20, iterator, with_content: false })}`), [path, iterator], 3000);
  const [notice, setNotice] = useState<string | null>(null);
  if (ep.data === undefined) return <>{ep.error === null ? <Loading /> : <><Title>Endpoint</Title><ErrorBox error={ep.error} /></>}</>;
  const e = ep.data;
  const h = health.data;
  const refresh = (): void => { ep.reload(); health.reload(); };
  return (
    <>
      <Title sub={<><CopyId id={e.id} label="endpoint id" /> · created <Time iso={e.createdAt} /></>}>{e.url}</Title>
      {notice === null ? null : <p class="notice" role="status">{notice}</p>}
      {scope.canWrite && h !== undefined ? (
        <div class="toolbar">
          {h.status === 'paused'
            ? <Action label="Resume" run={async () => { await api('POST', `${path}/resume`); refresh(); }} />
            : <Action label="Pause" disabled={h.status === 'disabled'} run={async () => { await api('POST', `${path}/pause`); refresh(); }} />}
          {e.disabled
            ? <Action label="Enable" run={async () => { await api('PATCH', path, { disabled: false }); refresh(); }} />
            : <Action label="Disable" danger confirm="Disable this endpoint? Its waiting deliveries are skipped." run={async () => { await api('PATCH', path, { disabled: true }); refresh(); }} />}
        </div>
      ) : null}
      <ErrorBox error={health.error} />
      {h === undefined ? <Loading label="Loading health…" /> : <HealthView health={h} />}
      <section class="card" aria-labelledby="attempts-h">
        <h2 id="attempts-h">Attempts</h2>
        <ErrorBox error={attempts.error} />
        {attempts.data === undefined ? <Loading /> : attempts.data.data.length === 0
          ? <Empty title="No attempts yet.">{scope.canWrite ? 'Send a test event below, or publish a message of a type this endpoint takes.' : 'They appear here as messages are delivered.'}</Empty>
          : <AttemptTable scope={scope} attempts={attempts.data.data} showEndpoint={false} />}
        <Pager page={attempts.data} at={iterator} onPage={setIterator} />
      </section>
      <div class="grid2">
        {scope.canWrite ? <EditEndpoint scope={scope} ep={e} onSaved={refresh} /> : null}
        {scope.canWrite && h !== undefined ? <LimitsEditor scope={scope} ep={e} health={h} onSaved={refresh} /> : null}
        <SecretTools scope={scope} ep={e} />
        <HeadersEditor scope={scope} ep={e} />
        {scope.canWrite ? <DeliveryTools scope={scope} ep={e} onDone={(t) => { setNotice(t); attempts.reload(); }} /> : null}
      </div>
    </>
  );
}
