import type { JSX } from 'preact';
import { client, ok } from '../shared/api.ts';
import { EndpointDetail } from '../shared/endpoint-detail.tsx';
import { EndpointsPage } from '../shared/endpoints.tsx';
import { EventTypePage, EventTypesPage } from '../shared/event-types.tsx';
import { MessageDetail, MessagesPage } from '../shared/messages.tsx';
import { SearchPage } from '../shared/search.tsx';
import type { Route } from '../shared/router.ts';
import { TimelinePage } from '../shared/timeline.tsx';
import type { Scope } from '../shared/types.ts';
import { useLoad } from '../shared/ui.tsx';
import { AppSettingsPage } from './app-settings.tsx';
import { AppsPage } from './apps.tsx';
import { DeadLettersPage } from './dead-letters.tsx';
import { ApiKeysPage, SettingsPage, TasksPage } from './ops-pages.tsx';
import { OverviewPage } from './overview.tsx';

/** The console's navigation: address and label of each top-level page. */
export const NAV = [
  ['/', 'Overview'],
  ['/apps', 'Applications'],
  ['/dead-letters', 'Dead letters'],
  ['/event-types', 'Event types'],
  ['/api-keys', 'API keys'],
  ['/tasks', 'Tasks'],
  ['/settings', 'Settings'],
] as const;

/** What the pages of one application are given: the application, its reload, and the replay pace. */
export interface AppContext {
  readonly scope: Scope;
  readonly reload: () => void;
  readonly rate: string | null;
}

/**
 * The pages of one application (first match wins; anything else under it shows its endpoints). Each page that
 * shows a record is keyed by that record's id, so going to another record (by address, back or forward) starts it
 * afresh: no form keeps the previous record's values.
 */
export const APP_ROUTES: readonly Route<JSX.Element, AppContext>[] = [
  {
    pattern: '/apps/:app/endpoints/:ep',
    show: (p, c) => <EndpointDetail key={p.ep} scope={c.scope} endpointId={p.ep!} />,
  },
  {
    pattern: '/apps/:app/messages/:msg/endpoints/:ep',
    show: (p, c) => <TimelinePage key={`${p.msg}/${p.ep}`} scope={c.scope} msgId={p.msg!} endpointId={p.ep!} />,
  },
  { pattern: '/apps/:app/messages/:msg', show: (p, c) => <MessageDetail key={p.msg} scope={c.scope} msgId={p.msg!} /> },
  { pattern: '/apps/:app/messages', show: (_p, c) => <MessagesPage scope={c.scope} /> },
  { pattern: '/apps/:app/search', show: (_p, c) => <SearchPage scope={c.scope} /> },
  { pattern: '/apps/:app/dead-letters', show: (p, c) => <DeadLettersPage appId={p.app!} rate={c.rate} /> },
  { pattern: '/apps/:app/settings', show: (p, c) => <AppSettingsPage appId={p.app!} onChanged={c.reload} /> },
  { pattern: '/apps/:app/*', show: (_p, c) => <EndpointsPage scope={c.scope} /> },
  { pattern: '/apps/:app', show: (_p, c) => <EndpointsPage scope={c.scope} /> },
];

/** The replay pace shown on the dead-letter pages (TIDINGS_REPLAY_RATE). */
export const useReplayRate = () =>
  useLoad(
    () =>
      ok(client.GET('/api/v1/settings')).then(
        (s) => s.data.find((x) => x.env === 'TIDINGS_REPLAY_RATE')?.value ?? null,
      ),
    [],
  );

function AllDeadLetters() {
  const rate = useReplayRate();
  return <DeadLettersPage appId={null} rate={rate.data ?? null} />;
}

/** What the top-level pages are given: the address and the pages of one application. */
export interface TopContext {
  readonly path: string;
  readonly appPages: (appId: string, path: string) => JSX.Element;
}

/** The console's top-level pages (first match wins; no match is "Not found"). */
export const ROUTES: readonly Route<JSX.Element, TopContext>[] = [
  { pattern: '/', show: () => <OverviewPage /> },
  { pattern: '/apps', show: () => <AppsPage /> },
  { pattern: '/apps/:app/*', show: (p, c) => c.appPages(p.app!, c.path) },
  { pattern: '/apps/:app', show: (p, c) => c.appPages(p.app!, c.path) },
  { pattern: '/dead-letters', show: () => <AllDeadLetters /> },
  { pattern: '/event-types', show: () => <EventTypesPage canEdit /> },
  { pattern: '/event-types/:name', show: (p) => <EventTypePage key={p.name} name={p.name!} canEdit /> },
  { pattern: '/api-keys', show: () => <ApiKeysPage /> },
  { pattern: '/tasks', show: () => <TasksPage /> },
  { pattern: '/settings', show: () => <SettingsPage /> },
];
