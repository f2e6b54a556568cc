import { useState } from 'preact/hooks';
import { client, ok } from './api.ts';
import { Bars } from './charts.tsx';
import { windowName } from './format.ts';
import { BreakerControls } from './breaker.tsx';
import { DeliveryTools, EditEndpoint, HeadersEditor, LimitsEditor, SecretTools } from './endpoint-tools.tsx';
import { RetryPolicyCard } from './retry-policy.tsx';
import { ReceiverAuthCard } from './receiver-auth.tsx';
import { NeverDelivered } from './undelivered.tsx';
import { href, navigate, seg } from './router.ts';
import { FilterCard } from './endpoint-filter.tsx';
import { DataTable } from './table.tsx';
import type { Attempt, Endpoint, EndpointRef, Health, Scope } from './types.ts';
import { Action, Badge, CopyId, Empty, ErrorBox, Loading, Pager, Show, Time, Title, useLoad } from './ui.tsx';

/** Breaker, failing since, counters, charts per window and the health history. */
function HealthView({ health }: { health: Health }) {
  type Window = Health['windows'][number];
  const rows = (pick: (w: Window) => number | null, text?: (w: Window) => string) =>
    health.windows.map((w) => ({
      label: windowName(w.windowS),
      value: pick(w),
      ...(text === undefined ? {} : { text: text(w) }),
    }));
  return (
    <section class="card" aria-labelledby="health-h">
      <h2 id="health-h">Health</h2>
      <dl class="facts">
        <dt>Status</dt>
        <dd>
          <Badge state={health.status} />
          {health.statusReason === null ? null : <span class="muted"> {health.statusReason}</span>}
        </dd>
        <dt>Breaker</dt>
        <dd>
          <Badge state={health.breaker.state} /> {health.breaker.consecutiveFailures} failures in a row
          {health.breaker.openUntil === null ? null : (
            <>
              {' '}
              · holds deliveries until <Time iso={health.breaker.openUntil} />
            </>
          )}
        </dd>
        {health.throttledUntil === null || new Date(health.throttledUntil).getTime() < Date.now() ? null : (
          <>
            <dt>Throttled</dt>
            <dd>
              held by the receiver's Retry-After until <Time iso={health.throttledUntil} />
            </dd>
          </>
        )}
        <dt>Failing since</dt>
        <dd>
          <Time iso={health.failingSince} />
        </dd>
        <dt>Last success</dt>
        <dd>
          <Time iso={health.lastSuccessAt} />
        </dd>
        <dt>In flight now</dt>
        <dd>
          {health.inFlight} · {health.currentRatePerS.toFixed(1)} requests/s
        </dd>
        <dt>Deliveries</dt>
        <dd>
          {Object.entries(health.deliveries).map(([k, v]) => (
            <span key={k} class="count">
              <Badge state={k} /> {v}
            </span>
          ))}
        </dd>
      </dl>
      <div class="charts">
        <Bars
          title="Success ratio"
          max={1}
          rows={rows((w) => w.successRatio)}
          format={(v) => `${(v * 100).toFixed(1)} %`}
          tone="ok"
        />
        <Bars
          title="Failed attempts"
          rows={rows(
            (w) => (w.attempts === 0 ? null : w.failed),
            (w) => `${w.failed} of ${w.attempts}`,
          )}
          format={String}
          tone="bad"
        />
        <Bars title="Latency p50 (ms)" rows={rows((w) => w.p50LatencyMs)} format={(v) => `${Math.round(v)} ms`} />
        <Bars title="Latency p99 (ms)" rows={rows((w) => w.p99LatencyMs)} format={(v) => `${Math.round(v)} ms`} />
      </div>
      <h3>History</h3>
      {health.history.length === 0 ? (
        <p class="muted">No breaker or status changes yet.</p>
      ) : (
        <ol class="history">
          {health.history.map((h) => (
            <li key={`${h.at}-${h.kind}`}>
              <Time iso={h.at} /> <strong>{h.kind.replaceAll('_', ' ')}</strong>
              {h.reason === null ? null : ` — ${h.reason}`}
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}

/** The latest attempts to this endpoint, each linking to its delivery timeline. */
export function AttemptTable({
  scope,
  attempts,
  showEndpoint,
}: {
  scope: Scope;
  attempts: Attempt[];
  showEndpoint: boolean;
}) {
  return (
    <DataTable
      rows={attempts}
      rowKey={(a) => a.id}
      columns={[
        { label: 'When', cell: (a) => <Time iso={a.timestamp} /> },
        {
          label: 'Result',
          cell: (a) => (
            <>
              <Badge state={a.statusText} /> #{a.attemptNumber}
              {a.triggerType === 1 ? ' (manual)' : ''}
            </>
          ),
        },
        { label: 'Status', cell: (a) => (a.responseStatusCode === 0 ? '—' : a.responseStatusCode) },
        { label: 'Latency', cell: (a) => `${a.responseDurationMs} ms` },
        { label: 'Error kind', cell: (a) => a.errorKind ?? '—' },
        {
          label: showEndpoint ? 'Endpoint' : 'Message',
          cell: (a) => (
            <CopyId id={showEndpoint ? a.endpointId : a.msgId} label={showEndpoint ? 'endpoint id' : 'message id'} />
          ),
        },
        {
          label: 'Timeline',
          cell: (a) => (
            <a
              href={href(`${scope.base}/messages/${seg(a.msgId)}/endpoints/${seg(a.endpointId)}`)}
              aria-label={`Timeline of ${a.msgId} to ${a.endpointId}`}
            >
              Timeline
            </a>
          ),
        },
      ]}
    />
  );
}

/**
 * Pause / resume, enable / disable and delete (with a dialog naming the endpoint and what happens to its deliveries).
 */
function EndpointControls({
  scope,
  ep,
  health,
  endpoint,
  refresh,
}: {
  scope: Scope;
  ep: Endpoint;
  health: Health;
  endpoint: EndpointRef;
  refresh: () => void;
}) {
  const params = { path: endpoint };
  const waiting = (health.deliveries.pending ?? 0) + (health.deliveries.leased ?? 0);
  return (
    <div class="toolbar">
      {health.status === 'paused' ? (
        <Action
          label="Resume"
          run={async () => {
            await ok(client.POST('/api/v1/app/{appId}/endpoint/{endpointId}/resume', { params }));
            refresh();
          }}
        />
      ) : (
        <Action
          label="Pause"
          disabled={health.status === 'disabled'}
          run={async () => {
            await ok(client.POST('/api/v1/app/{appId}/endpoint/{endpointId}/pause', { params }));
            refresh();
          }}
        />
      )}
      {ep.disabled ? (
        <Action
          label="Enable"
          run={async () => {
            await ok(client.PATCH('/api/v1/app/{appId}/endpoint/{endpointId}', { params, body: { disabled: false } }));
            refresh();
          }}
        />
      ) : (
        <Action
          label="Disable"
          danger
          run={async () => {
            await ok(client.PATCH('/api/v1/app/{appId}/endpoint/{endpointId}', { params, body: { disabled: true } }));
            refresh();
          }}
          confirm={{
            title: `Disable ${ep.url}?`,
            yes: 'Disable endpoint',
            body: (
              <p>
                Its {waiting} waiting deliveries are skipped (they can be replayed later), and nothing is sent to it
                until it is enabled again.
              </p>
            ),
          }}
        />
      )}
      <Action
        label="Delete endpoint"
        danger
        run={async () => {
          await ok(client.DELETE('/api/v1/app/{appId}/endpoint/{endpointId}', { params }));
          navigate(`${scope.base}/endpoints`);
        }}
        confirm={{
          title: `Delete endpoint ${ep.url}?`,
          yes: 'Delete endpoint',
          body: (
            <p>
              Endpoint <code>{ep.id}</code>
              {ep.description === '' ? null : <> ({ep.description})</>} is deleted: its {waiting} waiting deliveries are
              canceled and no request is sent to it again. This cannot be undone.
            </p>
          ),
        }}
      />
    </div>
  );
}

/** One endpoint: health, charts, controls, attempts; the forms hold this endpoint's values only (keyed by its id). */
export function EndpointDetail({ scope, endpointId }: { scope: Scope; endpointId: string }) {
  const path = `/api/v1/app/${seg(scope.appId)}/endpoint/${seg(endpointId)}`;
  const endpoint: EndpointRef = { appId: scope.appId, endpointId };
  const ep = useLoad(
    () => ok(client.GET('/api/v1/app/{appId}/endpoint/{endpointId}', { params: { path: endpoint } })),
    [path],
  );
  const health = useLoad(
    () => ok(client.GET('/api/v1/app/{appId}/endpoint/{endpointId}/health', { params: { path: endpoint } })),
    [path],
    5000,
  );
  const [iterator, setIterator] = useState<string | null>(null);
  const attempts = useLoad(
    () =>
      ok(
        client.GET('/api/v1/app/{appId}/attempt/endpoint/{endpointId}', {
          params: { path: endpoint, query: { limit: '20', iterator, with_content: 'false' } },
        }),
      ),
    [path, iterator],
    3000,
  );
  const [notice, setNotice] = useState<string | null>(null);
  if (ep.data === undefined)
    return (
      <>
        {ep.error === null ? (
          <Loading />
        ) : (
          <>
            <Title>Endpoint</Title>
            <ErrorBox error={ep.error} retry={ep.reload} busy={ep.loading} />
          </>
        )}
      </>
    );
  const e = ep.data;
  const h = health.data;
  const refresh = (): void => {
    ep.reload();
    health.reload();
  };
  return (
    <>
      <Title
        sub={
          <>
            <CopyId id={e.id} label="endpoint id" /> · created <Time iso={e.createdAt} />
          </>
        }
      >
        {e.url}
      </Title>
      {notice === null ? null : (
        <p class="notice" role="status">
          {notice}
        </p>
      )}
      {scope.canWrite && h !== undefined ? (
        <EndpointControls scope={scope} ep={e} health={h} endpoint={endpoint} refresh={refresh} />
      ) : null}
      <Show of={health} label="Loading health…">
        {(data) => (
          <>
            <HealthView health={data} />
            <BreakerControls key={e.id} endpoint={endpoint} health={data} canWrite={scope.canWrite} onDone={refresh} />
          </>
        )}
      </Show>
      <section class="card" aria-labelledby="attempts-h">
        <h2 id="attempts-h">Attempts</h2>
        <Show of={attempts}>
          {(page) =>
            page.data.length === 0 ? (
              <Empty title="No attempts yet.">
                {scope.canWrite
                  ? 'Send a test event below, or publish a message of a type this endpoint takes.'
                  : 'They appear here as messages are delivered.'}
              </Empty>
            ) : (
              <AttemptTable scope={scope} attempts={page.data} showEndpoint={false} />
            )
          }
        </Show>
        <Pager page={attempts.data} at={iterator} onPage={setIterator} />
      </section>
      <NeverDelivered key={e.id} scope={scope} endpointId={e.id} />
      <FilterCard key={e.id} scope={scope} endpoint={endpoint} />
      <div class="grid2">
        {scope.canWrite ? <EditEndpoint key={e.id} scope={scope} ep={e} onSaved={refresh} /> : null}
        {scope.canWrite && h !== undefined ? (
          <LimitsEditor key={e.id} scope={scope} ep={e} health={h} onSaved={refresh} />
        ) : null}
        <SecretTools key={e.id} scope={scope} ep={e} />
        <HeadersEditor key={e.id} scope={scope} ep={e} />
        <RetryPolicyCard key={e.id} endpoint={endpoint} />
        <ReceiverAuthCard key={e.id} scope={scope} endpoint={endpoint} />
        {scope.canWrite ? (
          <DeliveryTools
            key={e.id}
            scope={scope}
            ep={e}
            onDone={(t) => {
              setNotice(t);
              attempts.reload();
            }}
          />
        ) : null}
      </div>
    </>
  );
}
