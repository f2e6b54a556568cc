import { EventEmitter } from 'node:events';
import type pg from 'pg';
import type { Logger } from '../../../ports/logger.ts';
import type { Db } from '../db.ts';
import { WAKE_CHANNEL, type CarriedNotify, type NotifyCarrier } from './notify-carrier.ts';

/**
 * Publish wake-ups for dispatchers (docs/design.md#publishing): in-process always; on a PostgreSQL server also a NOTIFY
 * on {@link WAKE_CHANNEL} delivered after the commit that made work due, and a LISTEN that turns other processes'
 * NOTIFYs into local wake-ups. A process has at most one NOTIFY in flight: carried by a publish statement that starts
 * while none is (the {@link NotifyCarrier} side), or a statement of its own when no publish statement starts to carry
 * it (ADR 0006, "The process's NOTIFY rides on a publish statement"). A wake-up is a hint: a lost one costs at most one
 * poll interval, never a message.
 */
export interface Wakeups extends NotifyCarrier {
  /**
   * Called after a commit that made work due and did not carry a NOTIFY: wakes this process's dispatcher at once and,
   * on a server, owes other processes a NOTIFY sent after this commit. With no NOTIFY of the process in flight, a
   * publish statement that starts within this event-loop turn carries it, else a statement of its own goes at the
   * turn's end (setImmediate); with one in flight (whose NOTIFY may already have been delivered), the same happens
   * when it ends, or a statement of its own goes once the owed one has waited {@link WakeupsOptions.maxOwedWaitMs}.
   * Calls made meanwhile are folded into that one. Never throws; a failed NOTIFY statement is logged at debug level.
   */
  notify(): void;
  /**
   * {@link NotifyCarrier.begin}: `none` while a NOTIFY of the process is in flight (a statement that took a part and
   * has not ended, even one that will notify nothing, or a statement of the hub's own), after stop(), and on the
   * embedded engine; else this statement's part is the one in flight until its `end`, `always` when a wake-up is
   * owed, `own` otherwise. An `always` statement that ends without having notified (it failed, or stored nothing)
   * leaves the wake-up owed.
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

/**
 * Default {@link WakeupsOptions.maxOwedWaitMs}, ms: a NOTIFY owed while another is in flight waits at most this long
 * for it to end; past it a statement of its own goes at once, beside the one in flight. Short: a publish statement
 * held by a row lock (another transaction's eventId, an application's deletion) or a keyed group waiting for its
 * keys must not hold back other processes' wake-ups. Under load a publish statement ends well within it.
 */
export const MAX_OWED_WAIT_MS = 50;

/** Options of {@link createWakeups}. */
export interface WakeupsOptions {
  /** Longest wait of an owed NOTIFY for the one in flight, ms (default {@link MAX_OWED_WAIT_MS}). */
  readonly maxOwedWaitMs?: number;
}

/** Longest wait between LISTEN reconnect attempts, ms. The poll loop covers the gap meanwhile. */
const MAX_RECONNECT_MS = 10_000;

/*
 * NOTIFY_DUE — the process's wake-up NOTIFY as a statement of its own, sent when no publish statement carries it
 * (autocommit: delivered at once). No parameters (the channel is a constant, never a value); returns one row.
 */
const NOTIFY_DUE = `SELECT pg_notify('${WAKE_CHANNEL}', '')`;

/* LISTEN_DUE — run on the hub's own session (`Db.listenClient`, a direct connection): its NOTIFYs become wake-ups. */
const LISTEN_DUE = `LISTEN ${WAKE_CHANNEL}`;

/** Makes the wake-up hub for one process. */
export function createWakeups(db: Db, logger: Logger, options: WakeupsOptions = {}): Wakeups {
  const maxOwedWaitMs = options.maxOwedWaitMs ?? MAX_OWED_WAIT_MS;
  const emitter = new EventEmitter();
  emitter.setMaxListeners(0);
  let client: pg.Client | null = null;
  let stopped = false;
  let failures = 0;
  let timer: NodeJS.Timeout | undefined;
  // NOTIFYs of this process in flight (a publish statement's part, or a statement of its own). One as a rule: a
  // notifying commit takes a cluster-wide lock, so one at a time is what keeps publish commits from being serialized
  // behind it; a second only when an owed one has waited maxOwedWaitMs for the first.
  let inFlight = 0;
  // A commit with due work came while no NOTIFY, or only one that may already have been delivered, was in flight.
  let owed = false;
  let flushQueued = false;
  let owedTimer: NodeJS.Timeout | undefined;

  const pay = (): void => {
    owed = false;
    if (owedTimer !== undefined) clearTimeout(owedTimer);
    owedTimer = undefined;
  };
  // After a NOTIFY ends, or when one is owed: with none in flight, a publish statement that starts within this turn
  // carries the owed one (begin), else a statement of its own is sent at the turn's end; with one in flight, a
  // statement of its own goes after maxOwedWaitMs unless that one has ended and the debt is paid by then.
  const settle = (): void => {
    if (!owed || stopped) return;
    if (inFlight > 0) {
      if (owedTimer === undefined) {
        owedTimer = setTimeout(() => {
          owedTimer = undefined;
          if (owed && !stopped) void broadcast();
        }, maxOwedWaitMs);
        owedTimer.unref();
      }
      return;
    }
    if (flushQueued) return;
    flushQueued = true;
    setImmediate(() => {
      flushQueued = false;
      if (owed && inFlight === 0 && !stopped) void broadcast();
    });
  };
  const broadcast = async (): Promise<void> => {
    inFlight += 1;
    pay();
    try {
      await db.query(NOTIFY_DUE);
    } catch (error) {
      logger.debug({ err: error }, 'NOTIFY failed; other dispatchers find the work at their next poll');
    } finally {
      inFlight -= 1;
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
      await c.query(LISTEN_DUE);
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
      if (db.engine !== 'server' || inFlight > 0 || stopped) return CARRIES_NONE;
      inFlight += 1;
      const mode = owed ? 'always' : 'own';
      pay();
      let ended = false;
      return {
        mode,
        end(notified) {
          if (ended) return;
          ended = true;
          inFlight -= 1;
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
      pay();
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
