import { readFileSync } from 'node:fs';
import type { Config } from '../config/config.ts';
import type { Roles } from './roles.ts';

/** File descriptors kept for everything else: the listening sockets, log and data files, the LISTEN connection, DNS. */
export const FD_RESERVE = 64;

/** What one process may hold open at most, by part (see {@link fdBudget}). */
export interface FdBudget {
  /** TIDINGS_API_MAX_CONNECTIONS (api role). */
  readonly apiConnections: number;
  /** TIDINGS_CONCURRENCY: one socket per request in flight (dispatcher role). */
  readonly dispatcherSockets: number;
  /**
   * TIDINGS_DB_POOL_SIZE plus, on a server, the small-statement pools ({@link smallPublishPoolSize},
   * {@link SMALL_RECORD_POOL_SIZE}) and, in `serve`, TIDINGS_DISPATCHER_DB_POOL_SIZE.
   */
  readonly databaseConnections: number;
  readonly reserve: number;
  readonly total: number;
}

/**
 * Connections of the API's small-statement pool on a PostgreSQL server: the statements of publish groups of
 * few messages, keyed and not, each kind up to TIDINGS_DB_BATCHES_IN_FLIGHT at once
 * (docs/adr/0016-hot-path-cost.md, decision 24).
 */
export function smallPublishPoolSize(config: Pick<Config, 'dbBatchesInFlight'>): number {
  return 2 * config.dbBatchesInFlight;
}

/**
 * Connections of the dispatcher's small-statement pool on a PostgreSQL server: record transactions of few
 * outcomes. The recorder writes one batch at a time, and a connection that failed is discarded, not held.
 */
export const SMALL_RECORD_POOL_SIZE = 1;

/**
 * The file-descriptor budget of a process (ADR 0010): the API's connection cap, the dispatcher's window
 * (each request in flight holds one receiver socket; idle keep-alive receiver sockets close after their
 * keep-alive and are not counted), the database pools and {@link FD_RESERVE}. When the total fits under
 * the process's limit, no number of API clients can make the dispatcher's connect or claim fail with EMFILE.
 */
export function fdBudget(config: Config, roles: Roles, serverEngine: boolean): FdBudget {
  const apiConnections = roles.api ? config.apiMaxConnections : 0;
  const dispatcherSockets = roles.dispatcher ? config.concurrency : 0;
  const databaseConnections = !serverEngine
    ? 1
    : config.dbPoolSize +
      (roles.api ? smallPublishPoolSize(config) : 0) +
      (roles.dispatcher ? SMALL_RECORD_POOL_SIZE : 0) +
      (roles.api && roles.dispatcher ? config.dispatcherDbPoolSize : 0);
  return {
    apiConnections,
    dispatcherSockets,
    databaseConnections,
    reserve: FD_RESERVE,
    total: apiConnections + dispatcherSockets + databaseConnections + FD_RESERVE,
  };
}

/** The soft limit of open files of this process (Linux /proc/self/limits), or null where it cannot be read. */
export function openFileLimit(): number | null {
  try {
    const line = readFileSync('/proc/self/limits', 'utf8')
      .split('\n')
      .find((l) => l.startsWith('Max open files'));
    const soft = line?.split(/\s{2,}/)[1];
    return soft === undefined || soft === 'unlimited' ? null : Number(soft);
  } catch {
    return null;
  }
}
