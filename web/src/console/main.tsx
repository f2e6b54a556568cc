import { render } from 'preact';
import { useState } from 'preact/hooks';
import { get, seg, token } from '../shared/api.ts';
import { EndpointDetail } from '../shared/endpoint-detail.tsx';
import { EndpointsPage } from '../shared/endpoints.tsx';
import { EventTypePage, EventTypesPage } from '../shared/event-types.tsx';
import { MessageDetail, MessagesPage } from '../shared/messages.tsx';
import { href, match, route } from '../shared/router.ts';
import { Shell, SignIn, type Me } from '../shared/shell.tsx';
import { TimelinePage } from '../shared/timeline.tsx';
import type { Application, Scope, Setting } from '../shared/types.ts';
import { Empty, Title, useLoad } from '../shared/ui.tsx';
import '../shared/styles.css';
import { AppSettingsPage } from './app-settings.tsx';
import { AppsPage } from './apps.tsx';
import { DeadLettersPage } from './dead-letters.tsx';
import { ApiKeysPage, SettingsPage, TasksPage } from './ops-pages.tsx';
import { OverviewPage } from './overview.tsx';

const TOP = [
  ['/', 'Overview'],
  ['/apps', 'Applications'],
  ['/dead-letters', 'Dead letters'],
  ['/event-types', 'Event types'],
  ['/api-keys', 'API keys'],
  ['/tasks', 'Tasks'],
  ['/settings', 'Settings'],
] as const;

/** The replay pace shown on the dead-letter pages. */
const useReplayRate = () =>
  useLoad(
    () =>
      get<{ data: Setting[] }>('/api/v1/settings').then(
        (s) => s.data.find((x) => x.env === 'TIDINGS_REPLAY_RATE')?.value ?? null,
      ),
    [],
  );

/**
 * The pages of one application, with their own tab bar. Each page that shows a record is keyed by that
 * record's id, so going to another record (by address, back or forward) starts it afresh: no form keeps
 * the previous record's values.
 */
function AppPages({ appId, path }: { appId: string; path: string }) {
  const app = useLoad(() => get<Application>(`/api/v1/app/${seg(appId)}`), [appId]);
  const rate = useReplayRate();
  const scope: Scope = { appId, base: `/apps/${seg(appId)}`, canWrite: true, operator: true };
  const tabs = [
    ['endpoints', 'Endpoints'],
    ['messages', 'Messages'],
    ['dead-letters', 'Dead letters'],
    ['settings', 'Settings'],
  ] as const;
  let page;
  let p;
  if ((p = match('/apps/:app/endpoints/:ep', path)) !== null)
    page = <EndpointDetail key={p.ep} scope={scope} endpointId={p.ep!} />;
  else if ((p = match('/apps/:app/messages/:msg/endpoints/:ep', path)) !== null)
    page = <TimelinePage key={`${p.msg}/${p.ep}`} scope={scope} msgId={p.msg!} endpointId={p.ep!} />;
  else if ((p = match('/apps/:app/messages/:msg', path)) !== null)
    page = <MessageDetail key={p.msg} scope={scope} msgId={p.msg!} />;
  else if (match('/apps/:app/messages', path) !== null) page = <MessagesPage scope={scope} />;
  else if (match('/apps/:app/dead-letters', path) !== null)
    page = <DeadLettersPage appId={appId} rate={rate.data ?? null} />;
  else if (match('/apps/:app/settings', path) !== null) page = <AppSettingsPage appId={appId} onChanged={app.reload} />;
  else page = <EndpointsPage scope={scope} />;
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

function AllDeadLetters() {
  const rate = useReplayRate();
  return <DeadLettersPage appId={null} rate={rate.data ?? null} />;
}

function Router({ path }: { path: string }) {
  let p;
  if ((p = match('/apps/:app', path.split('/').slice(0, 3).join('/'))) !== null && path.split('/').length > 2)
    return <AppPages key={p.app} appId={p.app!} path={path} />;
  if ((p = match('/event-types/:name', path)) !== null) return <EventTypePage key={p.name} name={p.name!} canEdit />;
  switch (path) {
    case '/':
      return <OverviewPage />;
    case '/apps':
      return <AppsPage />;
    case '/dead-letters':
      return <AllDeadLetters />;
    case '/event-types':
      return <EventTypesPage canEdit />;
    case '/api-keys':
      return <ApiKeysPage />;
    case '/tasks':
      return <TasksPage />;
    case '/settings':
      return <SettingsPage />;
    default:
      return (
        <>
          <Title>Not found</Title>
          <Empty title={`No page at ${path}.`}>Choose a page from the navigation above.</Empty>
        </>
      );
  }
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
      nav={TOP.map(([to, label]) => (
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
