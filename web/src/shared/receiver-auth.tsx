import { useState } from 'preact/hooks';
import { client, ok } from './api.ts';
import type { components } from './api-types.ts';
import type { EndpointRef, Scope } from './types.ts';
import { Action, Show, useLoad } from './ui.tsx';

/** `GET …/endpoint/{ep}/auth` (docs/reference/api.md, "Receiver authentication"): secrets masked. */
type ReceiverAuthView = components['schemas']['ReceiverAuthOut'];
type Mode = 'none' | 'basic' | 'oauth2';

const text = (e: Event): string => (e.target as HTMLInputElement | HTMLTextAreaElement).value;
const orNull = (s: string): string | null => (s.trim() === '' ? null : s);

/** What is set, as a list of facts: user names and URLs in full, secrets as their masked hint. */
function Current({ view }: { view: ReceiverAuthView }) {
  const { basic, oauth2, mtls } = view;
  if (basic === null && oauth2 === null && mtls === null)
    return <p class="muted">None: requests carry the signature only.</p>;
  return (
    <dl class="facts" aria-label="Receiver authentication in use">
      {basic === null ? null : (
        <>
          <dt>Basic</dt>
          <dd>
            <code>{basic.username}</code> · password <code>{basic.password}</code>
          </dd>
        </>
      )}
      {oauth2 === null ? null : (
        <>
          <dt>OAuth2</dt>
          <dd>
            <code>{oauth2.clientId}</code> · secret <code>{oauth2.clientSecret}</code> at <code>{oauth2.tokenUrl}</code>
            {oauth2.scope === null ? null : (
              <>
                {' '}
                · scope <code>{oauth2.scope}</code>
              </>
            )}
            {oauth2.audience === null ? null : (
              <>
                {' '}
                · audience <code>{oauth2.audience}</code>
              </>
            )}
          </dd>
        </>
      )}
      {mtls?.certificate == null ? null : (
        <>
          <dt>Client certificate</dt>
          <dd>
            <code>{mtls.certificate.subject}</code> from <code>{mtls.certificate.issuer}</code>, until{' '}
            {mtls.certificate.validTo.slice(0, 10)} · key <code>{mtls.key}</code>
          </dd>
        </>
      )}
      {mtls?.ca == null ? null : (
        <>
          <dt>Receiver's CA</dt>
          <dd>
            {mtls.ca.map((c) => (
              <code key={c.fingerprint256}>{c.subject}</code>
            ))}
          </dd>
        </>
      )}
    </dl>
  );
}

type Fields = Record<
  | 'username'
  | 'password'
  | 'tokenUrl'
  | 'clientId'
  | 'clientSecret'
  | 'scope'
  | 'audience'
  | 'certificate'
  | 'key'
  | 'ca',
  string
>;
type Patch = components['schemas']['ReceiverAuthPatchInput'];

const LABEL: Record<Exclude<Mode, 'none'>, string> = { basic: 'HTTP basic', oauth2: 'OAuth2' };

const storedMode = (view: ReceiverAuthView): Mode =>
  view.basic !== null ? 'basic' : view.oauth2 !== null ? 'oauth2' : 'none';

/** Only what the user typed or changed: a secret left empty is kept as stored (PATCH keeps what it is not given). */
function changed(view: ReceiverAuthView, mode: Mode, f: Fields): { patch: Patch; says: string[] } {
  const patch: Record<string, unknown> = {};
  const says: string[] = [];
  const stored = storedMode(view);
  const pick = (entries: [string, string | null, boolean][]) =>
    Object.fromEntries(entries.filter(([, , keep]) => keep).map(([k, v]) => [k, v]));
  if (mode !== stored) {
    if (stored !== 'none') {
      patch[stored] = null;
      says.push(`removes ${LABEL[stored]}`);
    }
    if (mode === 'basic') patch['basic'] = { username: f.username, password: f.password };
    if (mode === 'oauth2')
      patch['oauth2'] = {
        tokenUrl: f.tokenUrl,
        clientId: f.clientId,
        clientSecret: f.clientSecret,
        scope: orNull(f.scope),
        audience: orNull(f.audience),
      };
    if (mode !== 'none') says.push(`sets ${LABEL[mode]}`);
  } else if (mode === 'basic' && view.basic !== null) {
    const b = pick([
      ['username', f.username, f.username !== view.basic.username],
      ['password', f.password, f.password !== ''],
    ]);
    if (Object.keys(b).length > 0) {
      patch['basic'] = b;
      says.push(`changes the ${Object.keys(b).join(' and ')} of HTTP basic`);
    }
  } else if (mode === 'oauth2' && view.oauth2 !== null) {
    const o = view.oauth2;
    const given = pick([
      ['tokenUrl', f.tokenUrl, f.tokenUrl !== o.tokenUrl],
      ['clientId', f.clientId, f.clientId !== o.clientId],
      ['clientSecret', f.clientSecret, f.clientSecret !== ''],
      ['scope', orNull(f.scope), orNull(f.scope) !== o.scope],
      ['audience', orNull(f.audience), orNull(f.audience) !== o.audience],
    ]);
    if (Object.keys(given).length > 0) {
      patch['oauth2'] = given;
      says.push(`changes the ${Object.keys(given).join(', ')} of OAuth2`);
    }
  }
  const tls = pick([
    ['certificate', f.certificate, orNull(f.certificate) !== null],
    ['key', f.key, orNull(f.key) !== null],
    ['ca', f.ca, orNull(f.ca) !== null],
  ]);
  if (Object.keys(tls).length > 0) {
    patch['mtls'] = tls;
    const names: Record<string, string> = {
      certificate: 'client certificate',
      key: 'private key',
      ca: "receiver's CA",
    };
    says.push(
      `sets the ${Object.keys(tls)
        .map((k) => names[k])
        .join(', ')}`,
    );
  }
  const kept = [
    ...(view.basic !== null && patch['basic'] === undefined ? ['HTTP basic'] : []),
    ...(view.oauth2 !== null && patch['oauth2'] === undefined ? ['OAuth2'] : []),
    ...(view.mtls !== null && patch['mtls'] === undefined ? ['the TLS client settings'] : []),
  ];
  if (says.length > 0 && kept.length > 0) says.push(`keeps ${kept.join(' and ')} unchanged`);
  return { patch: patch as Patch, says };
}

/**
 * The form, opened on what is stored: the mode, user names and URLs filled in; secrets empty, which keeps them.
 * Saving sends only what changed (`PATCH …/auth`); every other part and secret stays.
 */
function AuthForm({ endpoint, view, onSaved }: { endpoint: EndpointRef; view: ReceiverAuthView; onSaved: () => void }) {
  const [mode, setMode] = useState<Mode>(storedMode(view));
  const [f, setF] = useState<Fields>({
    username: view.basic?.username ?? '',
    password: '',
    tokenUrl: view.oauth2?.tokenUrl ?? '',
    clientId: view.oauth2?.clientId ?? '',
    clientSecret: '',
    scope: view.oauth2?.scope ?? '',
    audience: view.oauth2?.audience ?? '',
    certificate: '',
    key: '',
    ca: '',
  });
  const field = (name: keyof Fields) => ({ value: f[name], onInput: (e: Event) => setF({ ...f, [name]: text(e) }) });
  const keeps = (stored: boolean) => (stored ? 'unchanged (stored, hidden)' : '');
  const path = { params: { path: endpoint } };
  const send = async (body: Patch): Promise<void> => {
    await ok(client.PATCH('/api/v1/app/{appId}/endpoint/{endpointId}/auth', { ...path, body }));
    onSaved();
  };
  const { patch, says } = changed(view, mode, f);
  const m = view.mtls;
  return (
    <div class="form">
      <label>
        Authorization header{' '}
        <select value={mode} onChange={(e) => setMode((e.target as HTMLSelectElement).value as Mode)}>
          <option value="none">none</option>
          <option value="basic">HTTP basic</option>
          <option value="oauth2">OAuth2 client credentials</option>
        </select>
      </label>
      {mode === 'basic' ? (
        <>
          <label>
            User name <input autocomplete="off" {...field('username')} />
          </label>
          <label>
            Password{' '}
            <input
              type="password"
              autocomplete="new-password"
              placeholder={keeps(view.basic !== null)}
              {...field('password')}
            />
          </label>
        </>
      ) : null}
      {mode === 'oauth2' ? (
        <>
          <label>
            Token URL (https){' '}
            <input type="url" placeholder="https://idp.example.com/oauth/token" {...field('tokenUrl')} />
          </label>
          <label>
            Client id <input autocomplete="off" {...field('clientId')} />
          </label>
          <label>
            Client secret{' '}
            <input
              type="password"
              autocomplete="new-password"
              placeholder={keeps(view.oauth2 !== null)}
              {...field('clientSecret')}
            />
          </label>
          <label>
            Scope (optional) <input {...field('scope')} />
          </label>
          <label>
            Audience (optional) <input {...field('audience')} />
          </label>
        </>
      ) : null}
      <details open={m !== null}>
        <summary>TLS client certificate (mTLS)</summary>
        <div class="form">
          <p class="muted">
            Offered on this endpoint's connections only (https endpoints); the CA alone checks the receiver. A field
            left empty keeps what is stored.
          </p>
          <label>
            Certificate (PEM){' '}
            <textarea
              class="code"
              rows={4}
              placeholder={m?.certificate == null ? '-----BEGIN CERTIFICATE-----' : 'unchanged (shown above)'}
              {...field('certificate')}
            />
          </label>
          <label>
            Private key (PEM, unencrypted){' '}
            <textarea
              class="code"
              rows={4}
              placeholder={m?.key == null ? '-----BEGIN PRIVATE KEY-----' : keeps(true)}
              {...field('key')}
            />
          </label>
          <label>
            Receiver's CA (PEM, optional){' '}
            <textarea
              class="code"
              rows={3}
              placeholder={m?.ca == null ? '-----BEGIN CERTIFICATE-----' : 'unchanged (shown above)'}
              {...field('ca')}
            />
          </label>
        </div>
      </details>
      <p class="muted" role="status" aria-label="What Save changes">
        {says.length === 0
          ? 'Nothing to save yet. Secrets are stored encrypted and never shown again; a secret left empty is kept.'
          : `Save ${says.join('; ')}.`}
      </p>
      <span class="row">
        <Action
          label="Save receiver auth"
          disabled={says.length === 0}
          run={async () => {
            await send(patch);
            setF({ ...f, password: '', clientSecret: '', certificate: '', key: '', ca: '' });
          }}
        />
      </span>
      <Removals view={view} send={send} onSaved={onSaved} endpoint={endpoint} />
    </div>
  );
}

/** One button per stored part, each removing that part only; and one removing everything. */
function Removals({
  view,
  send,
  onSaved,
  endpoint,
}: {
  view: ReceiverAuthView;
  send: (body: Patch) => Promise<void>;
  onSaved: () => void;
  endpoint: EndpointRef;
}) {
  const m = view.mtls;
  const cert = m?.certificate != null;
  const ca = m?.ca != null;
  if (view.basic === null && view.oauth2 === null && m === null) return null;
  return (
    <span class="row" aria-label="Remove a part">
      {view.basic === null ? null : <Action label="Remove HTTP basic" danger run={() => send({ basic: null })} />}
      {view.oauth2 === null ? null : <Action label="Remove OAuth2" danger run={() => send({ oauth2: null })} />}
      {cert ? (
        <Action
          label="Remove client certificate"
          danger
          run={() => send({ mtls: ca ? { certificate: null, key: null } : null })}
        />
      ) : null}
      {ca ? (
        <Action label="Remove receiver's CA" danger run={() => send({ mtls: cert ? { ca: null } : null })} />
      ) : null}
      <Action
        label="Remove all receiver auth"
        danger
        run={async () => {
          await ok(client.DELETE('/api/v1/app/{appId}/endpoint/{endpointId}/auth', { params: { path: endpoint } }));
          onSaved();
        }}
      />
    </span>
  );
}

/**
 * The endpoint's receiver authentication (Tidings-only route `…/endpoint/{ep}/auth`): what is set, secrets masked,
 * and for who may change the endpoint a form that changes only what its user changes, and a removal per part.
 */
export function ReceiverAuthCard({ scope, endpoint }: { scope: Scope; endpoint: EndpointRef }) {
  const loaded = useLoad(
    () => ok(client.GET('/api/v1/app/{appId}/endpoint/{endpointId}/auth', { params: { path: endpoint } })),
    [endpoint.appId, endpoint.endpointId],
  );
  return (
    <section class="card form" aria-labelledby="receiver-auth-h">
      <h2 id="receiver-auth-h">Receiver authentication</h2>
      <Show of={loaded} label="Loading receiver authentication…">
        {(view) => (
          <>
            <Current view={view} />
            {scope.canWrite ? (
              <AuthForm key={view.version ?? 'none'} endpoint={endpoint} view={view} onSaved={loaded.reload} />
            ) : null}
          </>
        )}
      </Show>
    </section>
  );
}
