import { useState } from 'preact/hooks';
import { get, query } from '../shared/api.ts';
import { href } from '../shared/router.ts';
import { Badge, ErrorBox, Loading, Title, useLoad } from '../shared/ui.tsx';

interface Overview {
  deliveries: Record<string, number>;
  backlog: { dueNow: number; oldestDueAgeMs: number | null; leasedInFlight: number; scheduledLater: number; held: number };
  deadLettersLast24h: number;
  openBreakers: { count: number; endpointIds: string[] };
  runningTasks: number;
}
interface Percentiles { p50: number | null; p90: number | null; p99: number | null; count: number }
interface TimeInState {
  bucketMs: number; queueWaitMs: Percentiles; attemptLatencyMs: Percentiles; timeToDeliveredMs: Percentiles;
  attempts: number; succeeded: number; retryRate: number | null; deadLetterInflow: number; reclaims: number;
  series: { at: string; attempts: number; succeeded: number; failed: number }[];
}

const ms = (v: number | null): string => (v === null ? '—' : v < 1000 ? `${Math.round(v)} ms` : v < 120_000 ? `${(v / 1000).toFixed(1)} s` : `${(v / 60_000).toFixed(1)} min`);

/** A column chart of one series (SVG, drawn from numbers only), with its figures in a text summary. */
export function Series({ title, values, format, max }: { title: string; values: { at: string; value: number | null }[]; format: (v: number) => string; max?: number }) {
  const top = max ?? Math.max(1e-9, ...values.map((v) => v.value ?? 0));
  const w = 600;
  const h = 120;
  const bw = w / Math.max(1, values.length);
  const known = values.filter((v) => v.value !== null).map((v) => v.value!);
  const last = known.at(-1);
  return (
    <figure class="series">
      <figcaption>{title} <span class="muted">— latest {last === undefined ? 'no data' : format(last)}, peak {known.length === 0 ? 'no data' : format(Math.max(...known))}</span></figcaption>
      <svg viewBox={`0 0 ${w} ${h}`} preserveAspectRatio="none" role="img" aria-label={`${title}, ${values.length} buckets`}>
        <line x1="0" y1={h - 0.5} x2={w} y2={h - 0.5} class="axis" />
        {values.map((v, i) => (v.value === null || v.value === 0 ? null : <rect key={v.at} x={i * bw + 0.5} width={Math.max(1, bw - 1)} y={h - (v.value / top) * (h - 4)} height={(v.value / top) * (h - 4)} class="col"><title>{`${v.at}: ${format(v.value)}`}</title></rect>))}
      </svg>
    </figure>
  );
}

/** The installation at a glance: deliveries by state, backlog, dead letters, breakers, tasks, and rates over time. */
export function OverviewPage() {
  const [window, setWindow] = useState('1h');
  const overview = useLoad(() => get<Overview>('/api/v1/stats/overview'), [], 5000);
  const tis = useLoad(() => get<TimeInState>(`/api/v1/stats/time-in-state${query({ window })}`), [window], 10_000);
  const o = overview.data;
  const t = tis.data;
  return (
    <>
      <Title sub="Every figure comes from /api/v1/stats (refreshed every few seconds).">Overview</Title>
      <ErrorBox error={overview.error} />
      {o === undefined ? <Loading /> : (
        <div class="tiles">
          <section class="tile" aria-label="Deliveries by state"><h2>Deliveries</h2>{Object.entries(o.deliveries).map(([k, v]) => <p key={k} class="count"><Badge state={k} /> <strong>{v}</strong></p>)}</section>
          <section class="tile" aria-label="Backlog"><h2>Backlog</h2>
            <p><strong>{o.backlog.dueNow}</strong> due now</p><p>oldest due waits <strong>{ms(o.backlog.oldestDueAgeMs)}</strong></p>
            <p><strong>{o.backlog.leasedInFlight}</strong> in flight · {o.backlog.scheduledLater} retrying later · {o.backlog.held} held</p></section>
          <section class="tile" aria-label="Dead letters"><h2>Dead letters, 24 h</h2><p class="big">{o.deadLettersLast24h}</p></section>
          <section class="tile" aria-label="Open breakers"><h2>Open breakers</h2><p class="big">{o.openBreakers.count}</p>{o.openBreakers.endpointIds.map((id) => <p key={id}><code>{id}</code></p>)}</section>
          <section class="tile" aria-label="Running tasks"><h2>Running tasks</h2><p class="big">{o.runningTasks}</p><p><a href={href('/tasks')}>See tasks</a></p></section>
        </div>
      )}
      <section class="card" aria-labelledby="rates-h">
        <h2 id="rates-h">Over time</h2>
        <label>Window <select value={window} onChange={(e) => setWindow((e.target as HTMLSelectElement).value)}><option value="5m">5 minutes</option><option value="1h">1 hour</option><option value="24h">24 hours</option><option value="7d">7 days</option></select></label>
        <ErrorBox error={tis.error} />
        {t === undefined ? <Loading /> : (
          <>
            <div class="charts2">
              <Series title="Attempts per second" values={t.series.map((b) => ({ at: b.at, value: b.attempts / (t.bucketMs / 1000) }))} format={(v) => `${v.toFixed(2)}/s`} />
              <Series title="Success ratio" max={1} values={t.series.map((b) => ({ at: b.at, value: b.attempts === 0 ? null : b.succeeded / b.attempts }))} format={(v) => `${(v * 100).toFixed(1)} %`} />
            </div>
            <dl class="facts">
              <dt>Attempts</dt><dd>{t.attempts} ({t.succeeded} succeeded) · retry rate {t.retryRate === null ? '—' : `${(t.retryRate * 100).toFixed(1)} %`}</dd>
              <dt>Queue wait</dt><dd>p50 {ms(t.queueWaitMs.p50)} · p90 {ms(t.queueWaitMs.p90)} · p99 {ms(t.queueWaitMs.p99)}</dd>
              <dt>Attempt latency</dt><dd>p50 {ms(t.attemptLatencyMs.p50)} · p90 {ms(t.attemptLatencyMs.p90)} · p99 {ms(t.attemptLatencyMs.p99)}</dd>
              <dt>Publish → delivered</dt><dd>p50 {ms(t.timeToDeliveredMs.p50)} · p90 {ms(t.timeToDeliveredMs.p90)} · p99 {ms(t.timeToDeliveredMs.p99)}</dd>
              <dt>Dead-letter inflow</dt><dd>{t.deadLetterInflow} · reclaims {t.reclaims}</dd>
            </dl>
          </>
        )}
      </section>
    </>
  );
}
