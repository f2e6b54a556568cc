import { render } from 'preact';
import { useState } from 'preact/hooks';
import { client, ok, token } from '../shared/api.ts';
import { href, pick, route, seg } from '../shared/router.ts';
import { Shell, SignIn } from '../shared/shell.tsx';
import type { Me, Scope } from '../shared/types.ts';
import { Empty, Title, useLoad } from '../shared/ui.tsx';
import '../shared/styles.css';
import { APP_ROUTES, NAV, ROUTES, useReplayRate } from './routes.tsx';

/** The pages of one application, with their own tab bar (APP_ROUTES). */
function AppPages({ appId, path }: { appId: string; path: string }) {
  const app = useLoad(() => ok(client.GET('/api/v1/app/{appId}', { params: { path: { appId } } })), [appId]);
  const rate = useReplayRate();
  const scope: Scope = { appId, base: `/apps/${seg(appId)}`, canWrite: true, operator: true };
  const tabs = [
    ['endpoints', 'Endpoints'],
    ['messages', 'Messages'],
    ['search', 'Search'],
    ['dead-letters', 'Dead letters'],
    ['settings', 'Settings'],
  ] as const;
  const found = pick(APP_ROUTES, path);
  const page = found?.route.show(found.params, { scope, reload: app.reload, rate: rate.data ?? null });
  return (
    <>
      <nav class="tabs" aria-label="Application">
        <span class="app-name">
          <a href={href('/apps')}>Applications</a> › <strong>{app.data?.name ?? appId}</strong>
        </span>
        {tabs.map(([t, label]) => (
          <a
            key={t}
            href={href(`${scope.base}/${t}`)}
            aria-current={path.startsWith(`${scope.base}/${t}`) ? 'page' : undefined}
          >
            {label}
          </a>
        ))}
      </nav>
      {page}
    </>
  );
}

/** The page of an address (ROUTES), or "Not found". */
function Router({ path }: { path: string }) {
  const found = pick(ROUTES, path);
  if (found !== null)
    return found.route.show(found.params, {
      path,
      appPages: (appId, at) => <AppPages key={appId} appId={appId} path={at} />,
    });
  return (
    <>
      <Title>Not found</Title>
      <Empty title={`No page at ${path}.`}>Choose a page from the navigation above.</Empty>
    </>
  );
}

function Console() {
  const [me, setMe] = useState<Me | null>(null);
  if (me === null || token.value === null) return <SignIn onSignedIn={setMe} />;
  const path = route.value;
  const current = (to: string): boolean => (to === '/' ? path === '/' : path.startsWith(to));
  return (
    <Shell
      brand={
        <a href={href('/')}>
          Tidings <span class="muted">console</span>
        </a>
      }
      nav={NAV.map(([to, label]) => (
        <a key={to} href={href(to)} aria-current={current(to) ? 'page' : undefined}>
          {label}
        </a>
      ))}
      onSignOut={() => {
        token.value = null;
        setMe(null);
      }}
    >
      <Router path={path} />
    </Shell>
  );
}

render(<Console />, document.getElementById('root')!);
