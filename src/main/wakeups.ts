import { EventEmitter } from 'node:events';
import type pg from 'pg';
import type { Db } from '../adapters/postgres/db.ts';
import { WAKE_CHANNEL, type CarriedNotify, type NotifyCarrier } from '../adapters/postgres/message/message-store.ts';
import type { Logger } from '../ports/logger.ts';

/**
 * Publish wake-ups for dispatchers (docs/design.md#publishing): in-process always; on a PostgreSQL server also a NOTIFY on
 * {@link WAKE_CHANNEL} delivered after the commit that made work due, and a LISTEN that turns other processes' NOTIFYs
 * into local wake-ups. A process has at most one NOTIFY in flight: carried by a publish statement that starts while none
 * is (the {@link NotifyCarrier} side), or a statement of its own when no publish statement starts to carry it (ADR 0006,
 * "The process's NOTIFY rides on a publish statement"). A wake-up is a hint: a lost one costs at most one poll interval,
 * never a message.
 */
export interface Wakeups extends NotifyCarrier {
  /**
   * Called after a commit that made work due and did not carry a NOTIFY: wakes this process's dispatcher at once and,
   * on a server, owes other processes a NOTIFY sent after this commit. With no NOTIFY of the process in flight, the
   * publish statement that starts first within this event-loop turn carries it, else a statement of its own goes at
   * the turn's end (setImmediate); with one in flight (whose NOTIFY may already have been delivered), the same happens
   * when it ends. Calls made meanwhile are folded into that one. Never throws; a failed NOTIFY statement is logged at
   * debug level.
   */
  notify(): void;
  /**
   * {@link NotifyCarrier.begin}: `none` while a NOTIFY of the process is in flight; else this statement's NOTIFY is the
   * one in flight until its `end`, `always` when a wake-up is owed, `own` otherwise. An `always` statement that ends
   * without having notified (it failed, or stored nothing) leaves the wake-up owed.
   */
  begin(): CarriedNotify;
  /**
   * Called after a commit that made work due and carried its own NOTIFY (the publish statement's): wakes this
   * process's dispatcher only. Never throws.
   */
  woken(): void;
  /** Subscribes a listener; returns the unsubscribe function. */
  subscribe(listener: () => void): () => void;
  /** Starts LISTEN (server only); reconnects by itself with back-off when the connection drops. */
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** The part of a statement that carries no NOTIFY. */
const CARRIES_NONE: CarriedNotify = Object.freeze({ mode: 'none', end: () => undefined });

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
  // A NOTIFY of this process is in flight (a publish statement's, or a statement of its own). One at most: a notifying
  // commit takes a cluster-wide lock, so one at a time is what keeps publish commits from being serialized behind it.
  let carrying = false;
  // A commit with due work came while no NOTIFY, or only one that may already have been delivered, was in flight.
  let owed = false;
  let flushQueued = false;

  // After a NOTIFY ends, or when one is owed with none in flight: a publish statement that starts within this turn
  // carries the owed one (begin), else a statement of its own is sent at the turn's end.
  const settle = (): void => {
    if (!owed || carrying || flushQueued || stopped) return;
    flushQueued = true;
    setImmediate(() => {
      flushQueued = false;
      if (owed && !carrying && !stopped) void broadcast();
    });
  };
  const broadcast = async (): Promise<void> => {
    carrying = true;
    owed = false;
    try {
      await db.query(`SELECT pg_notify('${WAKE_CHANNEL}', '')`);
    } catch (error) {
      logger.debug({ err: error }, 'NOTIFY failed; other dispatchers find the work at their next poll');
    } finally {
      carrying = false;
      settle();
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
      owed = true;
      settle();
    },
    begin() {
      if (db.engine !== 'server' || carrying || stopped) return CARRIES_NONE;
      carrying = true;
      const mode = owed ? 'always' : 'own';
      owed = false;
      let ended = false;
      return {
        mode,
        end(notified) {
          if (ended) return;
          ended = true;
          carrying = false;
          if (mode === 'always' && !notified) owed = true;
          settle();
        },
      };
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
