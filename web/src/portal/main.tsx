import { render, type JSX } from 'preact';
import { useEffect } from 'preact/hooks';
import { ApiError, client, ok, token } from '../shared/api.ts';
import { EndpointDetail } from '../shared/endpoint-detail.tsx';
import { EndpointsPage } from '../shared/endpoints.tsx';
import { EventTypePage, EventTypesPage } from '../shared/event-types.tsx';
import { MessageDetail, MessagesPage } from '../shared/messages.tsx';
import { SearchPage } from '../shared/search.tsx';
import { href, navigate, pick, route, type Route } from '../shared/router.ts';
import { Shell } from '../shared/shell.tsx';
import { TimelinePage } from '../shared/timeline.tsx';
import type { Scope } from '../shared/types.ts';
import { Empty, ErrorBox, Loading, Title, useLoad } from '../shared/ui.tsx';
import '../shared/styles.css';
import { adoptLinkKey, forget, remember, restore } from './session.ts';

if (!adoptLinkKey()) restore();
// A new link opened in this tab (the embedding product hands out a fresh one): its key replaces the old.
window.addEventListener('hashchange', () => {
  adoptLinkKey();
});

const NAV = [
  ['/endpoints', 'Endpoints'],
  ['/messages', 'Messages'],
  ['/search', 'Search'],
  ['/event-types', 'Event catalogue'],
] as const;

/** The portal's pages (first match wins; anything else shows the endpoints); a record's page is keyed by its id. */
const ROUTES: readonly Route<JSX.Element, Scope>[] = [
  { pattern: '/endpoints/:ep', show: (p, scope) => <EndpointDetail key={p.ep} scope={scope} endpointId={p.ep!} /> },
  {
    pattern: '/messages/:msg/endpoints/:ep',
    show: (p, scope) => <TimelinePage key={`${p.msg}/${p.ep}`} scope={scope} msgId={p.msg!} endpointId={p.ep!} />,
  },
  { pattern: '/messages/:msg', show: (p, scope) => <MessageDetail key={p.msg} scope={scope} msgId={p.msg!} /> },
  { pattern: '/event-types/:name', show: (p) => <EventTypePage key={p.name} name={p.name!} canEdit={false} /> },
  { pattern: '/messages', show: (_p, scope) => <MessagesPage scope={scope} /> },
  { pattern: '/search', show: (_p, scope) => <SearchPage scope={scope} /> },
  { pattern: '/event-types', show: () => <EventTypesPage canEdit={false} /> },
];

function Pages({ scope, path }: { scope: Scope; path: string }) {
  const found = pick(ROUTES, path);
  return found === null ? <EndpointsPage scope={scope} /> : found.route.show(found.params, scope);
}

const NoKey = () => (
  <main id="main" class="signin">
    <div class="card">
      <Title>Webhooks portal</Title>
      <p>Open this page with the link you were given: it carries your access key.</p>
    </div>
  </main>
);

function Portal() {
  const key = token.value;
  const me = useLoad(() => (key === null ? Promise.resolve(null) : ok(client.GET('/api/v1/auth/me'))), [key]);
  const brand = useLoad(() => ok(client.GET('/api/v1/portal/branding')), [key]);
  useEffect(() => {
    if (me.data !== undefined && me.data !== null) remember(me.data.expiresAt ?? null);
    if (me.error instanceof ApiError && me.error.status === 401) forget();
  }, [me.data, me.error]);
  useEffect(() => {
    if (brand.data === undefined) return;
    document.documentElement.style.setProperty('--accent', brand.data.accentColor);
    document.title = brand.data.name;
  }, [brand.data]);
  if (key === null) return <NoKey />;
  if (me.data === undefined || me.data === null) {
    return (
      <main id="main">
        {me.error === null ? (
          <Loading />
        ) : (
          <>
            <Title>Webhooks portal</Title>
            <ErrorBox error={me.error} retry={me.reload} busy={me.loading} />
            <p>The link may have expired: ask for a new one.</p>
          </>
        )}
      </main>
    );
  }
  if (me.data.appId === undefined)
    return (
      <main id="main">
        <Title>Webhooks portal</Title>
        <Empty title="This token is not an application's.">Operators use the console at /console.</Empty>
      </main>
    );
  const scope: Scope = { appId: me.data.appId, base: '', canWrite: !me.data.readOnly, operator: false };
  const path = route.value;
  if (path === '/') navigate('/endpoints');
  const b = brand.data;
  const signOut = async (): Promise<void> => {
    await ok(client.POST('/api/v1/auth/logout')).catch(() => undefined);
    forget();
    token.value = null;
  };
  return (
    <Shell
      brand={
        <a href={href('/endpoints')}>
          {b?.logoUrl ? <img src={b.logoUrl} alt="" height={24} /> : null}
          {b?.name ?? 'Webhooks'}
        </a>
      }
      nav={NAV.map(([to, label]) => (
        <a key={to} href={href(to)} aria-current={path.startsWith(to) ? 'page' : undefined}>
          {label}
        </a>
      ))}
      onSignOut={() => void signOut()}
    >
      {scope.canWrite ? null : <p class="notice">Read-only access: you can look, not change.</p>}
      <Pages scope={scope} path={path} />
    </Shell>
  );
}

render(<Portal />, document.getElementById('root')!);
