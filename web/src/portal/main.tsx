import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { get, token } from '../shared/api.ts';
import { EndpointDetail } from '../shared/endpoint-detail.tsx';
import { EndpointsPage } from '../shared/endpoints.tsx';
import { EventTypesPage } from '../shared/event-types.tsx';
import { MessageDetail, MessagesPage } from '../shared/messages.tsx';
import { href, match, navigate, route } from '../shared/router.ts';
import { Shell, type Me } from '../shared/shell.tsx';
import { TimelinePage } from '../shared/timeline.tsx';
import type { Branding, Scope } from '../shared/types.ts';
import { Empty, ErrorBox, Loading, Title } from '../shared/ui.tsx';
import '../shared/styles.css';

/**
 * Takes the access token out of the URL fragment (`#key=…`, as app-portal-access links carry it) into
 * memory, and removes it from the address bar and the history at once (ADR 0012).
 */
function takeToken(): void {
  const params = new URLSearchParams(location.hash.replace(/^#/, ''));
  const key = params.get('key');
  if (key === null) return;
  token.value = key;
  history.replaceState(null, '', `${location.pathname}#/endpoints`);
  route.value = '/endpoints';
}
takeToken();

const NAV = [['/endpoints', 'Endpoints'], ['/messages', 'Messages'], ['/event-types', 'Event catalogue']] as const;

function Pages({ scope, path }: { scope: Scope; path: string }) {
  let p;
  if ((p = match('/endpoints/:ep', path)) !== null) return <EndpointDetail scope={scope} endpointId={p.ep!} />;
  if ((p = match('/messages/:msg/endpoints/:ep', path)) !== null) return <TimelinePage scope={scope} msgId={p.msg!} endpointId={p.ep!} />;
  if ((p = match('/messages/:msg', path)) !== null) return <MessageDetail scope={scope} msgId={p.msg!} />;
  if (path === '/messages') return <MessagesPage scope={scope} />;
  if (path === '/event-types') return <EventTypesPage canEdit={false} />;
  return <EndpointsPage scope={scope} />;
}

function Portal() {
  const [me, setMe] = useState<Me | null>(null);
  const [brand, setBrand] = useState<Branding | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    if (token.value === null) return;
    get<Me>('/api/v1/auth/me').then(setMe, setError);
    get<Branding>('/api/v1/portal/branding').then((b) => {
      setBrand(b);
      document.documentElement.style.setProperty('--accent', b.accentColor);
      document.title = b.name;
    }, () => undefined);
  }, []);
  if (token.value === null) {
    return <main id="main" class="signin"><div class="card"><Title>Webhooks portal</Title><p>Open this page with the link you were given: it carries your access key.</p></div></main>;
  }
  if (me === null) return <main id="main">{error === null ? <Loading /> : <><Title>Webhooks portal</Title><ErrorBox error={error} /><p>The link may have expired: ask for a new one.</p></>}</main>;
  if (me.appId === undefined) return <main id="main"><Title>Webhooks portal</Title><Empty title="This token is not an application's.">Operators use the console at /console.</Empty></main>;
  const scope: Scope = { appId: me.appId, base: '', canWrite: !me.readOnly, operator: false };
  const path = route.value;
  if (path === '/') navigate('/endpoints');
  return (
    <Shell
      brand={<a href={href('/endpoints')}>{brand?.logoUrl ? <img src={brand.logoUrl} alt="" height={24} /> : null}{brand?.name ?? 'Webhooks'}</a>}
      nav={NAV.map(([to, label]) => <a key={to} href={href(to)} aria-current={path.startsWith(to) ? 'page' : undefined}>{label}</a>)}
    >
      {scope.canWrite ? null : <p class="notice">Read-only access: you can look, not change.</p>}
      <Pages scope={scope} path={path} />
    </Shell>
  );
}

render(<Portal />, document.getElementById('root')!);
