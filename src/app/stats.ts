import type { EndpointStore } from '../ports/endpoint-store.ts';
import type { ApplicationStore } from '../ports/application-store.ts';
import { notFound } from '../domain/errors.ts';
import type { Clock } from '../ports/clock.ts';
import {
  ROLLUP_LEVELS,
  rollupLevelFor,
  type StatsOverview,
  type StatsScope,
  type StatsStore,
  type TimeInState,
} from '../ports/stats-store.ts';
import { fieldError, resolveApplication } from './applications.ts';
import type { Principal } from './credentials.ts';

/**
 * The windows of the time-in-state read, with the bucket of their attempts series, ms
 * (docs/adr/0013-observability.md): 5 min in 10 s buckets (30 points), 1 h in 1 min buckets (60),
 * 24 h in 15 min buckets (96), 7 d in 2 h buckets (84).
 */
export const STATS_WINDOWS = Object.freeze({
  '5m': { windowMs: 5 * 60_000, bucketMs: 10_000 },
  '1h': { windowMs: 3_600_000, bucketMs: 60_000 },
  '24h': { windowMs: 86_400_000, bucketMs: 15 * 60_000 },
  '7d': { windowMs: 7 * 86_400_000, bucketMs: 2 * 3_600_000 },
} as const);

/**
 * Where a window ending at `untilMs` starts: `windowMs` before it, or, for a window read through the coarsest
 * roll-up (7 d: 15 minutes), at that roll-up's boundary at or before that instant, so that no partial first bucket
 * is read raw and the read stays within a few roll-up rows at any rate (docs/adr/0030-history-partitions.md). The
 * answer's `since` says where it started: up to one roll-up width (15 minutes) earlier than asked, 1 ms before the
 * boundary (the window excludes its `since`).
 */
export function windowStart(untilMs: number, windowMs: number, bucketMs: number): number {
  const start = untilMs - windowMs;
  const coarsest = ROLLUP_LEVELS[ROLLUP_LEVELS.length - 1]!.levelMs;
  if (rollupLevelFor(windowMs, bucketMs) !== coarsest) return start;
  // The window is (since, until]: a since 1 ms before the boundary makes the boundary its first instant.
  return Math.floor((start + 1) / coarsest) * coarsest - 1;
}

/** A window name of {@link STATS_WINDOWS}. */
export type StatsWindow = keyof typeof STATS_WINDOWS;

/** Most endpoint ids listed under `openBreakers` in the overview. */
export const OPEN_BREAKERS_LISTED = 20;

/** What the caller asks about: refs are ids or the caller's uids; absent = the credential's whole view. */
export interface StatsQuery {
  readonly appRef: string | null;
  readonly endpointRef: string | null;
}

/** The overview, with the application it covers (null = the installation). */
export interface OverviewResult extends StatsOverview {
  readonly appId: string | null;
}

/** Time-in-state over a window, with the window's bounds and scope. */
export interface TimeInStateResult extends TimeInState {
  readonly window: StatsWindow;
  readonly since: Date;
  readonly until: Date;
  readonly bucketMs: number;
  readonly appId: string | null;
  readonly endpointId: string | null;
}

/** Installation statistics for operators and, within their application, application credentials. */
export interface Stats {
  /** @throws AppError `not_found` (an application the credential cannot see) */
  overview(principal: Principal, query: Pick<StatsQuery, 'appRef'>): Promise<OverviewResult>;
  /**
   * @throws AppError `not_found`; `validation` on `query.app_id` when an operator names an endpoint without
   *   its application
   */
  timeInState(principal: Principal, window: StatsWindow, query: StatsQuery): Promise<TimeInStateResult>;
}

/** Dependencies of {@link createStats}. */
export interface StatsDeps {
  readonly lookups: Pick<ApplicationStore, 'findApplication'> & Pick<EndpointStore, 'findEndpoint'>;
  readonly store: StatsStore;
  readonly clock: Clock;
}

/** Makes the statistics use cases. An application credential is confined to its application. */
export function createStats(deps: StatsDeps): Stats {
  const scopeOf = async (principal: Principal, query: StatsQuery): Promise<StatsScope> => {
    const appRef = query.appRef ?? (principal.kind === 'app' ? principal.appId : null);
    if (appRef === null) {
      if (query.endpointRef !== null) throw fieldError(['query', 'app_id'], 'app_id is required with endpoint_id');
      return { appId: null, endpointId: null };
    }
    const app = await resolveApplication(deps.lookups, principal, appRef);
    if (query.endpointRef === null) return { appId: app.id, endpointId: null };
    const ep = await deps.lookups.findEndpoint(app.id, query.endpointRef);
    if (ep === null) throw notFound('Endpoint');
    return { appId: app.id, endpointId: ep.id };
  };
  const now = (): Date => deps.clock.sqlNow() ?? new Date(deps.clock.nowMs());
  return {
    async overview(principal, query) {
      const scope = await scopeOf(principal, { appRef: query.appRef, endpointRef: null });
      return { appId: scope.appId, ...(await deps.store.overview(scope, deps.clock.sqlNow(), OPEN_BREAKERS_LISTED)) };
    },
    async timeInState(principal, window, query) {
      const scope = await scopeOf(principal, query);
      const { windowMs, bucketMs } = STATS_WINDOWS[window];
      const until = now();
      const since = new Date(windowStart(until.getTime(), windowMs, bucketMs));
      const figures = await deps.store.timeInState(scope, since, until, bucketMs);
      return { window, since, until, bucketMs, appId: scope.appId, endpointId: scope.endpointId, ...figures };
    },
  };
}
