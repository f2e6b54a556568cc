import { useState } from 'preact/hooks';
import { client, ok } from './api.ts';
import type { Scope, TimelineEntry } from './types.ts';
import { NextAttempt } from './hold.tsx';
import { DataTable } from './table.tsx';
import { Action, Badge, CopyId, Pre, Show, Time, Title, useLoad } from './ui.tsx';

const FINAL = new Set(['succeeded', 'dead', 'skipped', 'canceled']);

/** "+1.234 s" from the first transition. */
function offset(ms: number): string {
  if (ms < 1000) return `+${ms} ms`;
  if (ms < 120_000) return `+${(ms / 1000).toFixed(3)} s`;
  return `+${(ms / 60_000).toFixed(1)} min`;
}

/** Milliseconds spent in each state: from each transition to the next (to now for a live last one). */
export function timeInState(entries: readonly TimelineEntry[], now: number): [string, number][] {
  const out = new Map<string, number>();
  entries.forEach((e, i) => {
    const next = entries[i + 1];
    const end = next === undefined ? (FINAL.has(e.state) ? null : now) : new Date(next.at).getTime();
    if (end !== null) out.set(e.state, (out.get(e.state) ?? 0) + Math.max(0, end - new Date(e.at).getTime()));
  });
  return [...out.entries()];
}

/**
 * The delivery of one message to one endpoint: every transition with its offset, state, dispatcher id and
 * fencing token (console only), HTTP status, latency and error kind; time per state; the attempts with their response
 * prefix (as text); resend and replay. Refreshed every 2 s while the delivery is live.
 */
export function TimelinePage({ scope, msgId, endpointId }: { scope: Scope; msgId: string; endpointId: string }) {
  const appId = scope.appId;
  const delivery = { appId, msgId, endpointId };
  const [live, setLive] = useState(true);
  const timeline = useLoad(
    async () => {
      const t = await ok(
        client.GET('/api/v1/app/{appId}/msg/{msgId}/endpoint/{endpointId}/timeline', {
          params: { path: delivery, query: { limit: '250' } },
        }),
      );
      setLive(!FINAL.has(t.deliveryState));
      return t;
    },
    [appId, msgId, endpointId],
    live ? 1000 : 5000,
  );
  const attempts = useLoad(
    () =>
      ok(
        client.GET('/api/v1/app/{appId}/attempt/msg/{msgId}', {
          params: {
            path: { appId, msgId },
            query: { limit: '50', with_content: 'true', order: 'ascending', endpoint_id: endpointId },
          },
        }),
      ).then((p) => p.data),
    [appId, msgId, endpointId],
    live ? 1000 : 5000,
  );
  const msg = useLoad(
    () =>
      ok(
        client.GET('/api/v1/app/{appId}/msg/{msgId}', {
          params: { path: { appId, msgId }, query: { with_content: 'false' } },
        }),
      ),
    [appId, msgId],
  );
  const [notice, setNotice] = useState<string | null>(null);
  const first = timeline.data?.data[0] === undefined ? 0 : new Date(timeline.data.data[0].at).getTime();
  return (
    <>
      <Title
        sub={
          <>
            message <CopyId id={msgId} label="message id" /> → endpoint <CopyId id={endpointId} label="endpoint id" />
          </>
        }
      >
        Delivery timeline
      </Title>
      {notice === null ? null : (
        <p class="notice" role="status">
          {notice}
        </p>
      )}
      <Show of={timeline}>
        {(t) => (
          <>
            <section class="card" aria-labelledby="now-h">
              <h2 id="now-h">Now</h2>
              <dl class="facts">
                <dt>State</dt>
                <dd>
                  <Badge state={t.deliveryState} />
                  {t.deadReason === null ? null : <span class="muted"> {t.deadReason}</span>}
                </dd>
                <dt>Attempts</dt>
                <dd>{t.attemptCount}</dd>
                <dt>Next attempt</dt>
                <dd>
                  {FINAL.has(t.deliveryState) ? (
                    <span class="muted">none (final)</span>
                  ) : (
                    <NextAttempt hold={t} next={t.nextAttemptAt} />
                  )}
                </dd>
                <dt>Time in state</dt>
                <dd>
                  {timeInState(t.data, Date.now()).map(([s, ms]) => (
                    <span class="count" key={s}>
                      <Badge state={s} /> {ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`}
                    </span>
                  ))}
                </dd>
              </dl>
              {scope.canWrite ? (
                <div class="toolbar">
                  <Action
                    label="Resend now"
                    run={async () => {
                      await ok(
                        client.POST('/api/v1/app/{appId}/msg/{msgId}/endpoint/{endpointId}/resend', {
                          params: { path: delivery },
                        }),
                      );
                      setNotice('Resent: one manual attempt was queued.');
                      timeline.reload();
                    }}
                  />
                  {t.deliveryState === 'dead' && msg.data !== undefined ? (
                    <Action
                      label="Replay dead letter"
                      run={async () => {
                        const at = new Date(msg.data!.timestamp).getTime();
                        const body = {
                          since: new Date(at).toISOString(),
                          until: new Date(at + 1).toISOString(),
                          endpointId,
                          eventTypes: [msg.data!.eventType],
                        };
                        const task = await ok(
                          client.POST('/api/v1/app/{appId}/dead-letter/replay', { params: { path: { appId } }, body }),
                        );
                        setNotice(`Replay task ${task.id} started: the delivery goes back to pending.`);
                        setLive(true);
                      }}
                    />
                  ) : null}
                </div>
              ) : null}
            </section>
            <section class="card" aria-labelledby="tl-h">
              <h2 id="tl-h">Transitions</h2>
              <DataTable
                class="timeline"
                rows={t.data}
                rowKey={(e) => e.id}
                columns={[
                  { label: 'Offset', cell: (e) => offset(new Date(e.at).getTime() - first) },
                  { label: 'At', cell: (e) => <Time iso={e.at} /> },
                  { label: 'State', cell: (e) => <Badge state={e.state} /> },
                  // The dispatcher (a host name) and the fencing token are the operator's: the portal never shows them.
                  ...(scope.operator
                    ? [
                        {
                          label: 'Dispatcher',
                          cell: (e: TimelineEntry) =>
                            e.dispatcherId === null ? '—' : <code class="dispatcher">{e.dispatcherId}</code>,
                        },
                        {
                          label: 'Fencing token',
                          cell: (e: TimelineEntry) =>
                            e.fencingToken === null ? '—' : <code class="fencing">{e.fencingToken}</code>,
                        },
                      ]
                    : []),
                  { label: 'HTTP', cell: (e) => e.statusCode ?? '—' },
                  { label: 'Latency', cell: (e) => (e.latencyMs === null ? '—' : `${e.latencyMs} ms`) },
                  { label: 'Error kind', cell: (e) => e.errorKind ?? '—' },
                  { label: 'Reason', cell: (e) => e.reason ?? '—' },
                ]}
              />
            </section>
          </>
        )}
      </Show>
      <section class="card" aria-labelledby="att-h">
        <h2 id="att-h">Attempts and responses</h2>
        <Show of={attempts}>
          {(list) =>
            list.length === 0 ? (
              <p class="muted">No attempt yet.</p>
            ) : (
              list.map((a) => (
                <article class="attempt" key={a.id} aria-label={`Attempt ${a.attemptNumber}`}>
                  <h3>
                    <Badge state={a.statusText} /> Attempt {a.attemptNumber}
                    {a.triggerType === 1 ? ' (manual)' : ''} ·{' '}
                    {a.responseStatusCode === 0 ? 'no HTTP status' : `HTTP ${a.responseStatusCode}`} ·{' '}
                    {a.responseDurationMs} ms · <Time iso={a.timestamp} />
                  </h3>
                  <Pre
                    label={`Response of attempt ${a.attemptNumber}`}
                    text={a.response === '' ? '(empty response)' : a.response}
                  />
                </article>
              ))
            )
          }
        </Show>
      </section>
    </>
  );
}
