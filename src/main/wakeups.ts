import { EventEmitter } from 'node:events';
import type pg from 'pg';
import type { Db } from '../adapters/postgres/db.ts';
import { WAKE_CHANNEL } from '../adapters/postgres/message-store.ts';
import type { Logger } from '../ports/logger.ts';

/** Publish wake-ups for dispatchers: in-process always, plus LISTEN on a PostgreSQL server (DESIGN §5). */
export interface Wakeups {
  /** Wakes this process's dispatcher (called after a publish commits). */
  notifyLocal(): void;
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
    notifyLocal: () => emitter.emit('wake'),
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
