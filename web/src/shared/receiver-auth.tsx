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

/** The form: every field empty (secrets are never shown back); saving replaces the whole configuration. */
function AuthForm({ endpoint, onSaved }: { endpoint: EndpointRef; onSaved: () => void }) {
  const [mode, setMode] = useState<Mode>('none');
  const [f, setF] = useState({
    username: '',
    password: '',
    tokenUrl: '',
    clientId: '',
    clientSecret: '',
    scope: '',
    audience: '',
    certificate: '',
    key: '',
    ca: '',
  });
  const field = (name: keyof typeof f) => ({ value: f[name], onInput: (e: Event) => setF({ ...f, [name]: text(e) }) });
  const body = () => {
    const tls = orNull(f.certificate) !== null || orNull(f.ca) !== null;
    return {
      ...(mode === 'basic' ? { basic: { username: f.username, password: f.password } } : {}),
      ...(mode === 'oauth2'
        ? {
            oauth2: {
              tokenUrl: f.tokenUrl,
              clientId: f.clientId,
              clientSecret: f.clientSecret,
              scope: orNull(f.scope),
              audience: orNull(f.audience),
            },
          }
        : {}),
      ...(tls ? { mtls: { certificate: orNull(f.certificate), key: orNull(f.key), ca: orNull(f.ca) } } : {}),
    };
  };
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
            Password <input type="password" autocomplete="new-password" {...field('password')} />
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
            Client secret <input type="password" autocomplete="new-password" {...field('clientSecret')} />
          </label>
          <label>
            Scope (optional) <input {...field('scope')} />
          </label>
          <label>
            Audience (optional) <input {...field('audience')} />
          </label>
        </>
      ) : null}
      <details>
        <summary>TLS client certificate (mTLS)</summary>
        <div class="form">
          <p class="muted">Offered on this endpoint's connections only; the CA alone checks the receiver.</p>
          <label>
            Certificate (PEM){' '}
            <textarea class="code" rows={4} placeholder="-----BEGIN CERTIFICATE-----" {...field('certificate')} />
          </label>
          <label>
            Private key (PEM, unencrypted){' '}
            <textarea class="code" rows={4} placeholder="-----BEGIN PRIVATE KEY-----" {...field('key')} />
          </label>
          <label>
            Receiver's CA (PEM, optional){' '}
            <textarea class="code" rows={3} placeholder="-----BEGIN CERTIFICATE-----" {...field('ca')} />
          </label>
        </div>
      </details>
      <p class="muted">
        Secrets are stored encrypted and never shown again. Saving replaces every field: enter each secret anew.
      </p>
      <span class="row">
        <Action
          label="Save receiver auth"
          run={async () => {
            await ok(
              client.PUT('/api/v1/app/{appId}/endpoint/{endpointId}/auth', {
                params: { path: endpoint },
                body: body(),
              }),
            );
            setF({ ...f, password: '', clientSecret: '', key: '' });
            onSaved();
          }}
        />
        <Action
          label="Remove receiver auth"
          danger
          run={async () => {
            await ok(client.DELETE('/api/v1/app/{appId}/endpoint/{endpointId}/auth', { params: { path: endpoint } }));
            onSaved();
          }}
        />
      </span>
    </div>
  );
}

/**
 * The endpoint's receiver authentication (Tidings-only route `…/endpoint/{ep}/auth`): what is set, secrets masked,
 * and for who may change the endpoint a form that replaces it.
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
        {(view) => <Current view={view} />}
      </Show>
      {scope.canWrite ? <AuthForm endpoint={endpoint} onSaved={loaded.reload} /> : null}
    </section>
  );
}
