import { useState } from 'preact/hooks';
import { client, ok } from '../shared/api.ts';
import { millis } from '../shared/format.ts';
import { href } from '../shared/router.ts';
import { TimeChart } from '../shared/charts.tsx';
import type { paths } from '../shared/api-types.ts';
import type { Overview } from '../shared/types.ts';
import { Badge, Show, Title, useLoad } from '../shared/ui.tsx';
import { TransportTile } from './transport-card.tsx';

type StatsWindow = NonNullable<
  NonNullable<paths['/api/v1/stats/time-in-state']['get']['parameters']['query']>['window']
>;
const WINDOWS: readonly StatsWindow[] = ['5m', '1h', '24h', '7d'];

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
            · oldest waits <strong>{millis(b.oldestDueAgeMs)}</strong>
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
  const [window, setWindow] = useState<StatsWindow>('1h');
  const overview = useLoad(() => ok(client.GET('/api/v1/stats/overview')), [], 5000);
  const tis = useLoad(
    () => ok(client.GET('/api/v1/stats/time-in-state', { params: { query: { window } } })),
    [window],
    10_000,
  );
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
            <TransportTile />
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
          <select
            value={window}
            onChange={(e) => setWindow(WINDOWS.find((w) => w === (e.target as HTMLSelectElement).value) ?? '1h')}
          >
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
                  p50 {millis(t.queueWaitMs.p50)} · p90 {millis(t.queueWaitMs.p90)} · p99 {millis(t.queueWaitMs.p99)}
                </dd>
                <dt>Attempt latency</dt>
                <dd>
                  p50 {millis(t.attemptLatencyMs.p50)} · p90 {millis(t.attemptLatencyMs.p90)} · p99{' '}
                  {millis(t.attemptLatencyMs.p99)}
                </dd>
                <dt>Publish → delivered</dt>
                <dd>
                  p50 {millis(t.timeToDeliveredMs.p50)} · p90 {millis(t.timeToDeliveredMs.p90)} · p99{' '}
                  {millis(t.timeToDeliveredMs.p99)}
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
