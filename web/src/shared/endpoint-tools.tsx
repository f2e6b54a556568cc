import { useState } from 'preact/hooks';
import { client, ok } from './api.ts';
import { listField } from './parse.ts';
import type { Endpoint, Health, Scope } from './types.ts';
import { Action, ErrorBox, Pre, useLoad } from './ui.tsx';

/** The path parameters of one endpoint's routes. */
const epPath = (scope: Scope, id: string) => ({ path: { appId: scope.appId, endpointId: id } });
const value = (e: Event): string => (e.target as HTMLInputElement).value;

/**
 * Edit URL, description, event-type filter and channels (PATCH); its state is this endpoint's (the caller keys it by
 * id).
 */
export function EditEndpoint({ scope, ep, onSaved }: { scope: Scope; ep: Endpoint; onSaved: () => void }) {
  const [url, setUrl] = useState(ep.url);
  const [description, setDescription] = useState(ep.description);
  const [types, setTypes] = useState((ep.filterTypes ?? []).join(', '));
  const [channels, setChannels] = useState((ep.channels ?? []).join(', '));
  return (
    <section class="card form" aria-labelledby="edit-h">
      <h2 id="edit-h">Settings</h2>
      <label>
        URL <input type="url" value={url} onInput={(e) => setUrl(value(e))} />
      </label>
      <label>
        Description <input value={description} onInput={(e) => setDescription(value(e))} />
      </label>
      <label>
        Event types (comma-separated, empty = all) <input value={types} onInput={(e) => setTypes(value(e))} />
      </label>
      <label>
        Channels (comma-separated, empty = all) <input value={channels} onInput={(e) => setChannels(value(e))} />
      </label>
      <Action
        label="Save settings"
        run={async () => {
          const body = { url, description, filterTypes: listField(types), channels: listField(channels) };
          await ok(client.PATCH('/api/v1/app/{appId}/endpoint/{endpointId}', { params: epPath(scope, ep.id), body }));
          onSaved();
        }}
      />
    </section>
  );
}

/** Limits editor: in-flight cap, rate and burst (empty = unlimited). */
export function LimitsEditor({
  scope,
  ep,
  health,
  onSaved,
}: {
  scope: Scope;
  ep: Endpoint;
  health: Health;
  onSaved: () => void;
}) {
  const text = (n: number | null): string => (n === null ? '' : String(n));
  const [maxInFlight, setMax] = useState(text(health.limits.maxInFlight));
  const [rate, setRate] = useState(text(health.limits.rateLimit));
  const [burst, setBurst] = useState(text(health.limits.rateBurst));
  const num = (s: string): number | null => (s.trim() === '' ? null : Number(s));
  return (
    <section class="card form" aria-labelledby="limits-h">
      <h2 id="limits-h">Limits</h2>
      <label>
        Requests in flight at most{' '}
        <input inputMode="numeric" placeholder="unlimited" value={maxInFlight} onInput={(e) => setMax(value(e))} />
      </label>
      <label>
        Rate, requests per second{' '}
        <input inputMode="numeric" placeholder="unlimited" value={rate} onInput={(e) => setRate(value(e))} />
      </label>
      <label>
        Burst, requests{' '}
        <input inputMode="numeric" placeholder="default" value={burst} onInput={(e) => setBurst(value(e))} />
      </label>
      <Action
        label="Save limits"
        run={async () => {
          const body = { maxInFlight: num(maxInFlight), rateLimit: num(rate), rateBurst: num(burst) };
          await ok(
            client.PATCH('/api/v1/app/{appId}/endpoint/{endpointId}/limits', { params: epPath(scope, ep.id), body }),
          );
          onSaved();
        }}
      />
    </section>
  );
}

/** Reveal the signing secret; rotate it with a grace period. */
export function SecretTools({ scope, ep }: { scope: Scope; ep: Endpoint }) {
  const [secret, setSecret] = useState<string | null>(null);
  const [grace, setGrace] = useState('86400');
  return (
    <section class="card form" aria-labelledby="secret-h">
      <h2 id="secret-h">Signing secret</h2>
      {secret === null ? (
        <p class="muted">Hidden. Receivers verify signatures with it (Standard Webhooks).</p>
      ) : (
        <Pre label="Signing secret" text={secret} />
      )}
      {/* A view-only credential may not read secrets (docs/adr/0011-credential-capabilities.md). */}
      {scope.canWrite ? (
        <span class="row">
          {secret === null ? (
            <Action
              label="Reveal secret"
              run={async () =>
                setSecret(
                  (
                    await ok(
                      client.GET('/api/v1/app/{appId}/endpoint/{endpointId}/secret', { params: epPath(scope, ep.id) }),
                    )
                  ).key,
                )
              }
            />
          ) : (
            <button type="button" onClick={() => setSecret(null)}>
              Hide secret
            </button>
          )}
        </span>
      ) : null}
      {scope.canWrite ? (
        <>
          <label>
            Grace period, seconds (the old secret keeps signing){' '}
            <input inputMode="numeric" value={grace} onInput={(e) => setGrace(value(e))} />
          </label>
          <Action
            label="Rotate secret"
            confirm={{
              title: `Rotate the signing secret of ${ep.url}?`,
              yes: 'Rotate secret',
              body: (
                <p>
                  Requests are signed with a new secret at once; the old one keeps signing too for {grace} seconds.
                  Receivers must switch before then.
                </p>
              ),
            }}
            run={async () => {
              const body = { gracePeriodSeconds: Number(grace) };
              await ok(
                client.POST('/api/v1/app/{appId}/endpoint/{endpointId}/secret/rotate', {
                  params: epPath(scope, ep.id),
                  body,
                }),
              );
              setSecret(null);
            }}
          />
        </>
      ) : null}
    </section>
  );
}

/** Custom headers sent with every request (sensitive ones listed by name only). */
export function HeadersEditor({ scope, ep }: { scope: Scope; ep: Endpoint }) {
  const headers = useLoad(
    () => ok(client.GET('/api/v1/app/{appId}/endpoint/{endpointId}/headers', { params: epPath(scope, ep.id) })),
    [ep.id],
  );
  const [name, setName] = useState('');
  const [val, setVal] = useState('');
  return (
    <section class="card form" aria-labelledby="headers-h">
      <h2 id="headers-h">Custom headers</h2>
      <ErrorBox error={headers.error} />
      {headers.data === undefined ? null : Object.keys(headers.data.headers).length + headers.data.sensitive.length ===
        0 ? (
        <p class="muted">
          {scope.canWrite ? 'None. Add one below (e.g. an authorization header the receiver expects).' : 'None.'}
        </p>
      ) : (
        <ul class="plain">
          {Object.entries(headers.data.headers).map(([k, v]) => (
            <li key={k}>
              <code>{k}</code>: <code>{v}</code>{' '}
              {scope.canWrite ? (
                <Action
                  label={`Remove ${k}`}
                  run={async () => {
                    const body = { headers: {}, deleteHeaders: [k] };
                    await ok(
                      client.PATCH('/api/v1/app/{appId}/endpoint/{endpointId}/headers', {
                        params: epPath(scope, ep.id),
                        body,
                      }),
                    );
                    headers.reload();
                  }}
                />
              ) : null}
            </li>
          ))}
          {headers.data.sensitive.map((k) => (
            <li key={k}>
              <code>{k}</code>: <span class="muted">(sensitive, hidden)</span>
              {k.toLowerCase() === 'authorization' ? (
                <span class="muted">
                  {' '}
                  · not sent when receiver authentication sets basic or OAuth2: that replaces it
                </span>
              ) : null}
            </li>
          ))}
        </ul>
      )}
      {scope.canWrite ? (
        <div class="row">
          <label>
            Name <input value={name} onInput={(e) => setName(value(e))} />
          </label>
          <label>
            Value <input value={val} onInput={(e) => setVal(value(e))} />
          </label>
          <Action
            label="Set header"
            run={async () => {
              const body = { headers: { [name]: val } };
              await ok(
                client.PATCH('/api/v1/app/{appId}/endpoint/{endpointId}/headers', {
                  params: epPath(scope, ep.id),
                  body,
                }),
              );
              setName('');
              setVal('');
              headers.reload();
            }}
          />
        </div>
      ) : null}
    </section>
  );
}

/** Send an example event; recover (or replay missing) a time window. */
export function DeliveryTools({ scope, ep, onDone }: { scope: Scope; ep: Endpoint; onDone: (text: string) => void }) {
  const types = useLoad(() => ok(client.GET('/api/v1/event-type', { params: { query: { limit: '250' } } })), []);
  const [type, setType] = useState('');
  const [since, setSince] = useState(() => new Date(Date.now() - 3_600_000).toISOString().slice(0, 16));
  const choices = (types.data?.data ?? []).filter((t) => !t.archived);
  const chosen = type === '' ? (choices[0]?.name ?? '') : type;
  const window = (): { since: string } => ({ since: new Date(`${since}Z`).toISOString() });
  return (
    <section class="card form" aria-labelledby="tools-h">
      <h2 id="tools-h">Send and recover</h2>
      {choices.length === 0 ? (
        <p class="muted">No event types yet: a test event needs one (see Event types).</p>
      ) : (
        <div class="row">
          <label>
            Event type{' '}
            <select value={chosen} onChange={(e) => setType((e.target as HTMLSelectElement).value)}>
              {choices.map((t) => (
                <option key={t.name} value={t.name}>
                  {t.name}
                </option>
              ))}
            </select>
          </label>
          <Action
            label="Send test event"
            run={async () => {
              const body = { eventType: chosen };
              const m = await ok(
                client.POST('/api/v1/app/{appId}/endpoint/{endpointId}/send-example', {
                  params: epPath(scope, ep.id),
                  body,
                }),
              );
              onDone(`Test event ${m.id} sent.`);
            }}
          />
        </div>
      )}
      <div class="row">
        <label>
          Since (UTC) <input type="datetime-local" value={since} onInput={(e) => setSince(value(e))} />
        </label>
        <Action
          label="Recover failed"
          run={async () => {
            const t = await ok(
              client.POST('/api/v1/app/{appId}/endpoint/{endpointId}/recover', {
                params: epPath(scope, ep.id),
                body: window(),
              }),
            );
            onDone(`Recover task ${t.id} started.`);
          }}
        />
        <Action
          label="Replay missing"
          run={async () => {
            const params = epPath(scope, ep.id);
            const t = await ok(
              client.POST('/api/v1/app/{appId}/endpoint/{endpointId}/replay-missing', { params, body: window() }),
            );
            onDone(`Replay task ${t.id} started.`);
          }}
        />
      </div>
    </section>
  );
}
