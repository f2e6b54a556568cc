import { useState } from 'preact/hooks';
import { get, query } from '../shared/api.ts';
import { href } from '../shared/router.ts';
import { TimeChart } from '../shared/charts.tsx';
import { Badge, Show, Title, useLoad } from '../shared/ui.tsx';

interface Overview {
  deliveries: Record<string, number>;
  backlog: {
    dueNow: number;
    oldestDueAgeMs: number | null;
    leasedInFlight: number;
    scheduledLater: number;
    held: number;
    heldBy?: { paused: number; breaker: number; throttled: number };
  };
  deadLettersLast24h: number;
  openBreakers: { count: number; endpointIds: string[] };
  runningTasks: number;
}
interface Percentiles {
  p50: number | null;
  p90: number | null;
  p99: number | null;
  count: number;
}
interface TimeInState {
  bucketMs: number;
  queueWaitMs: Percentiles;
  attemptLatencyMs: Percentiles;
  timeToDeliveredMs: Percentiles;
  attempts: number;
  succeeded: number;
  retryRate: number | null;
  deadLetterInflow: number;
  reclaims: number;
  series: { at: string; attempts: number; succeeded: number; failed: number }[];
}

const ms = (v: number | null): string =>
  v === null
    ? '—'
    : v < 1000
      ? `${Math.round(v)} ms`
      : v < 120_000
        ? `${(v / 1000).toFixed(1)} s`
        : `${(v / 60_000).toFixed(1)} min`;

/** Waiting work: due now (goes as soon as a dispatcher has room) apart from what endpoints hold back. */
function BacklogTile({ backlog: b }: { backlog: Overview['backlog'] }) {
  const by = b.heldBy;
  const parts =
    by === undefined
      ? []
      : (
          [
            [by.breaker, 'by an open breaker'],
            [by.paused, 'paused'],
            [by.throttled, 'throttled by Retry-After'],
          ] as const
        )
          .filter(([n]) => n > 0)
          .map(([n, what]) => `${n} ${what}`);
  return (
    <section class="tile" aria-label="Backlog">
      <h2>Backlog</h2>
      <p>
        <strong>{b.dueNow}</strong> due now
        {b.dueNow === 0 ? null : (
          <>
            {' '}
            · oldest waits <strong>{ms(b.oldestDueAgeMs)}</strong>
          </>
        )}
      </p>
      <p>
        <strong>{b.held}</strong> held by their endpoint
        {parts.length === 0 ? null : <span class="muted"> ({parts.join(', ')})</span>}
      </p>
      <p>
        <strong>{b.leasedInFlight}</strong> in flight · {b.scheduledLater} retrying later
      </p>
    </section>
  );
}

/** The installation at a glance: deliveries by state, backlog, dead letters, breakers, tasks, and rates over time. */
export function OverviewPage() {
  const [window, setWindow] = useState('1h');
  const overview = useLoad(() => get<Overview>('/api/v1/stats/overview'), [], 5000);
  const tis = useLoad(() => get<TimeInState>(`/api/v1/stats/time-in-state${query({ window })}`), [window], 10_000);
  return (
    <>
      <Title sub="Every figure comes from /api/v1/stats (refreshed every few seconds).">Overview</Title>
      <Show of={overview}>
        {(o) => (
          <div class="tiles">
            <section class="tile" aria-label="Deliveries by state">
              <h2>Deliveries</h2>
              {Object.entries(o.deliveries).map(([k, v]) => (
                <p key={k} class="count">
                  <Badge state={k} /> <strong>{v}</strong>
                </p>
              ))}
            </section>
            <BacklogTile backlog={o.backlog} />
            <section class="tile" aria-label="Became dead letters, 24 h">
              <h2>Became dead letters, 24 h</h2>
              <p class="big">{o.deadLettersLast24h}</p>
              <p>
                <a href={href('/dead-letters')}>See dead letters</a>
              </p>
            </section>
            <section class="tile" aria-label="Open breakers">
              <h2>Open breakers</h2>
              <p class="big">{o.openBreakers.count}</p>
              {o.openBreakers.endpointIds.map((id) => (
                <p key={id}>
                  <code>{id}</code>
                </p>
              ))}
            </section>
            <section class="tile" aria-label="Running tasks">
              <h2>Running tasks</h2>
              <p class="big">{o.runningTasks}</p>
              <p>
                <a href={href('/tasks')}>See tasks</a>
              </p>
            </section>
          </div>
        )}
      </Show>
      <section class="card" aria-labelledby="rates-h">
        <h2 id="rates-h">Over time</h2>
        <label>
          Window{' '}
          <select value={window} onChange={(e) => setWindow((e.target as HTMLSelectElement).value)}>
            <option value="5m">5 minutes</option>
            <option value="1h">1 hour</option>
            <option value="24h">24 hours</option>
            <option value="7d">7 days</option>
          </select>
        </label>
        <Show of={tis}>
          {(t) => (
            <>
              <div class="charts2">
                <TimeChart
                  title="Attempts per second"
                  at={t.series.map((b) => b.at)}
                  format={(v) => `${v.toFixed(2)}/s`}
                  series={[
                    { name: 'succeeded', tone: 'ok', values: t.series.map((b) => b.succeeded / (t.bucketMs / 1000)) },
                    { name: 'failed', tone: 'bad', values: t.series.map((b) => b.failed / (t.bucketMs / 1000)) },
                  ]}
                />
                <TimeChart
                  title="Success ratio"
                  max={1}
                  at={t.series.map((b) => b.at)}
                  format={(v) => `${(v * 100).toFixed(1)} %`}
                  series={[
                    {
                      name: 'success ratio',
                      tone: 'accent',
                      values: t.series.map((b) => (b.attempts === 0 ? null : b.succeeded / b.attempts)),
                    },
                  ]}
                />
              </div>
              <dl class="facts">
                <dt>Attempts</dt>
                <dd>
                  {t.attempts} ({t.succeeded} succeeded) · retry rate{' '}
                  {t.retryRate === null ? '—' : `${(t.retryRate * 100).toFixed(1)} %`}
                </dd>
                <dt>Queue wait</dt>
                <dd>
                  p50 {ms(t.queueWaitMs.p50)} · p90 {ms(t.queueWaitMs.p90)} · p99 {ms(t.queueWaitMs.p99)}
                </dd>
                <dt>Attempt latency</dt>
                <dd>
                  p50 {ms(t.attemptLatencyMs.p50)} · p90 {ms(t.attemptLatencyMs.p90)} · p99 {ms(t.attemptLatencyMs.p99)}
                </dd>
                <dt>Publish → delivered</dt>
                <dd>
                  p50 {ms(t.timeToDeliveredMs.p50)} · p90 {ms(t.timeToDeliveredMs.p90)} · p99{' '}
                  {ms(t.timeToDeliveredMs.p99)}
                </dd>
                <dt>Dead-letter inflow</dt>
                <dd>
                  {t.deadLetterInflow} · reclaims {t.reclaims}
                </dd>
              </dl>
            </>
          )}
        </Show>
      </section>
    </>
  );
}
