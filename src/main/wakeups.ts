import { EventEmitter } from 'node:events';
import type pg from 'pg';
import type { Db } from '../adapters/postgres/db.ts';
import { WAKE_CHANNEL } from '../adapters/postgres/message/message-store.ts';
import type { Logger } from '../ports/logger.ts';

/**
 * Publish wake-ups for dispatchers (docs/design.md#publishing): in-process always; on a PostgreSQL server also a NOTIFY on
 * {@link WAKE_CHANNEL}, sent after commit and coalesced (a lone publish carries its own instead, ADR 0006), and a LISTEN that turns other processes' NOTIFYs into
 * local wake-ups. A wake-up is a hint: a lost one costs at most one poll interval, never a message.
 */
export interface Wakeups {
  /**
   * Called after a commit that made work due: wakes this process's dispatcher at once and, on a server, sends
   * one NOTIFY for every burst of calls (at most one statement in flight; calls made meanwhile are folded into
   * one more). Never throws; a failed NOTIFY is logged at debug level.
   */
  notify(): void;
  /**
   * Called after a commit that made work due and carried its own NOTIFY (the publish statement's, ADR 0006
   * decision "a lone publish notifies at its commit"): wakes this process's dispatcher only. Never throws.
   */
  woken(): void;
  /** Subscribes a listener; returns the unsubscribe function. */
  subscribe(listener: () => void): () => void;
  /** Starts LISTEN (server only); reconnects by itself with back-off when the connection drops. */
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** Longest wait between LISTEN reconnect attempts, ms. The poll loop covers the gap meanwhile. */
const MAX_RECONNECT_MS = 10_000;

/** Makes the wake-up hub for one process. */
export function createWakeups(db: Db, logger: Logger): Wakeups {
  const emitter = new EventEmitter();
  emitter.setMaxListeners(0);
  let client: pg.Client | null = null;
  let stopped = false;
  let failures = 0;
  let timer: NodeJS.Timeout | undefined;
  let notifying = false;
  let notifyAgain = false;

  // One NOTIFY statement in flight at most: a notifying commit takes a cluster-wide lock, so one per burst of
  // publishes is what keeps publish commits from being serialized behind it.
  const broadcast = async (): Promise<void> => {
    notifying = true;
    try {
      do {
        notifyAgain = false;
        await db.query(`SELECT pg_notify('${WAKE_CHANNEL}', '')`);
      } while (notifyAgain && !stopped);
    } catch (error) {
      logger.debug({ err: error }, 'NOTIFY failed; other dispatchers find the work at their next poll');
    } finally {
      notifying = false;
    }
  };

  const connect = async (): Promise<void> => {
    if (stopped) return;
    try {
      const c = await db.listenClient();
      if (c === null) return;
      client = c;
      c.on('notification', () => emitter.emit('wake'));
      const lost = (error?: Error): void => {
        if (client !== c) return;
        client = null;
        c.removeAllListeners();
        c.on('error', () => undefined);
        void c.end().catch(() => undefined);
        if (!stopped) {
          logger.warn({ err: error }, 'LISTEN connection lost; reconnecting (polling meanwhile)');
          schedule();
        }
      };
      c.on('error', lost);
      c.on('end', () => lost());
      await c.query(`LISTEN ${WAKE_CHANNEL}`);
      failures = 0;
      emitter.emit('wake'); // work may have arrived while we were not listening
    } catch (error) {
      logger.warn({ err: error }, 'LISTEN failed; retrying (polling meanwhile)');
      schedule();
    }
  };
  const schedule = (): void => {
    failures += 1;
    timer = setTimeout(() => void connect(), Math.min(MAX_RECONNECT_MS, 100 * 2 ** failures));
    timer.unref();
  };

  return {
    notify() {
      emitter.emit('wake');
      if (db.engine !== 'server' || stopped) return;
      if (notifying) notifyAgain = true;
      else void broadcast();
    },
    woken() {
      emitter.emit('wake');
    },
    subscribe(listener) {
      emitter.on('wake', listener);
      return () => emitter.off('wake', listener);
    },
    start: connect,
    async stop() {
      stopped = true;
      if (timer !== undefined) clearTimeout(timer);
      const c = client;
      client = null;
      if (c !== null) {
        c.removeAllListeners();
        c.on('error', () => undefined);
        await c.end().catch(() => undefined);
      }
    },
  };
}
