import { connect, type NatsConnection } from '@nats-io/transport-node';
import type { BrokerState, BrokerStateChange } from '../../ports/broker.ts';

/*
 * The NATS connection of the transport and its state (src/ports/broker.ts, BrokerState):
 *
 *   connecting ──first connection up, topology declared──► connected
 *   connecting ──a dial failed──► disconnected (dialling on)
 *   connected ──connection lost──► disconnected ──reconnected, topology declared again──► connected
 *   any ──stop──► stopped
 *
 * Until the first connection is up this module dials itself, with a doubling back-off from reconnectMinMs to
 * reconnectMaxMs (a first connect in the client cannot be cancelled by a stop). From then on the client reconnects
 * by itself, paced by the same back-off through its reconnectDelayHandler, and never gives up. Each change of state
 * is reported once to the listeners; attempts are not reported.
 */

/** What the link needs. */
export interface NatsLinkOptions {
  /** `nats://host:port` (a list: comma-separated). */
  readonly url: string;
  readonly reconnectMinMs: number;
  readonly reconnectMaxMs: number;
  /** Longest wait for one connection handshake. */
  readonly connectTimeoutMs: number;
  /** Client ping interval: a connection silent for about two of them is taken as lost. */
  readonly pingIntervalMs: number;
  /** Client name the server shows in its monitoring. */
  readonly name: string;
  /**
   * Runs after each (re)connection, before the state becomes `connected` (declares the topology); a rejection
   * keeps the link out of `connected` and is tried again after the back-off.
   */
  readonly onUp: (nc: NatsConnection) => Promise<void>;
}

/** The connection and its state. */
export interface NatsLink {
  state(): BrokerState;
  /** The connection while `connected`, else null. */
  connection(): NatsConnection | null;
  onStateChange(listener: (change: BrokerStateChange) => void): () => void;
  /** Resolves when the state is `connected`, or with false once it is `stopped`. */
  whenConnected(): Promise<boolean>;
  start(waitForBroker: boolean): Promise<void>;
  stop(): Promise<void>;
}

/** Longest wait at the stop for the server to confirm it received what was written (acknowledgements). */
const STOP_FLUSH_MS = 1000;

/** The wait before attempt n + 1 (n ≥ 1) of a doubling back-off, bounded. */
export function backoffMs(attempt: number, minMs: number, maxMs: number): number {
  return Math.min(maxMs, minMs * 2 ** Math.min(30, Math.max(0, attempt - 1)));
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Creates a link (not yet started). */
export function createNatsLink(options: NatsLinkOptions): NatsLink {
  let state: BrokerState = 'connecting';
  let nc: NatsConnection | null = null;
  let reconnectAttempts = 0;
  let timer: NodeJS.Timeout | undefined;
  let wakeTimer: (() => void) | undefined;
  const listeners = new Set<(change: BrokerStateChange) => void>();
  let waiters: ((up: boolean) => void)[] = [];

  /** The state now (a function, so that a check after an await is not narrowed by one before it). */
  const stateNow = (): BrokerState => state;
  const setState = (next: BrokerState, reason: string | null): void => {
    if (next === state || state === 'stopped') return;
    const previous = state;
    state = next;
    if (next === 'connected' || next === 'stopped') {
      const woken = waiters;
      waiters = [];
      for (const resolve of woken) resolve(next === 'connected');
    }
    for (const listener of [...listeners]) {
      try {
        listener({ state: next, previous, reason });
      } catch {
        // A listener's fault is its own.
      }
    }
  };

  const pause = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      wakeTimer = resolve;
      timer = setTimeout(resolve, ms);
    });

  /** Declares the topology until it succeeds, the connection drops or the link stops. */
  const bringUp = async (conn: NatsConnection): Promise<void> => {
    for (let attempt = 1; state !== 'stopped' && !conn.isClosed(); attempt += 1) {
      try {
        await options.onUp(conn);
        if (stateNow() === 'stopped' || conn.isClosed() || nc !== conn) return;
        setState('connected', null);
        return;
      } catch {
        await pause(backoffMs(attempt, options.reconnectMinMs, options.reconnectMaxMs));
      }
    }
  };

  const watch = async (conn: NatsConnection): Promise<void> => {
    for await (const status of conn.status()) {
      if (state === 'stopped') return;
      if (status.type === 'disconnect') {
        reconnectAttempts = 0;
        setState('disconnected', `connection to ${status.server} lost`);
      } else if (status.type === 'reconnecting') {
        reconnectAttempts += 1;
      } else if (status.type === 'reconnect') {
        void bringUp(conn);
      }
    }
  };

  const dial = async (): Promise<NatsConnection> =>
    connect({
      servers: options.url
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s !== ''),
      name: options.name,
      timeout: options.connectTimeoutMs,
      pingInterval: options.pingIntervalMs,
      maxPingOut: 2,
      reconnect: true,
      maxReconnectAttempts: -1,
      reconnectDelayHandler: () => backoffMs(reconnectAttempts, options.reconnectMinMs, options.reconnectMaxMs),
    });

  /** Dials until connected (or stopped), then watches the connection; a closed connection starts it again. */
  const run = async (first: NatsConnection | null, declared = false): Promise<void> => {
    let conn = first;
    for (let attempt = 1; conn === null; attempt += 1) {
      if (state === 'stopped') return;
      try {
        conn = await dial();
      } catch (error) {
        // The first failed dial (and each change of reason after it) is reported once as `disconnected`.
        setState('disconnected', messageOf(error));
        await pause(backoffMs(attempt, options.reconnectMinMs, options.reconnectMaxMs));
      }
    }
    if (stateNow() === 'stopped') {
      await conn.close().catch(() => undefined);
      return;
    }
    nc = conn;
    const watching = watch(conn);
    if (declared) setState('connected', null);
    else await bringUp(conn);
    await watching;
    const closedBy = await conn.closed();
    if (state === 'stopped') return;
    nc = null;
    setState('disconnected', closedBy instanceof Error ? messageOf(closedBy) : 'connection closed');
    void run(null);
  };

  return {
    state: () => state,
    connection: () => (state === 'connected' ? nc : null),
    onStateChange(listener) {
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },
    whenConnected() {
      if (state === 'connected') return Promise.resolve(true);
      if (state === 'stopped') return Promise.resolve(false);
      return new Promise((resolve) => {
        waiters.push(resolve);
      });
    },
    async start(waitForBroker) {
      if (waitForBroker) {
        void run(null);
        return;
      }
      let first: NatsConnection | null = null;
      try {
        first = await dial();
        await options.onUp(first);
      } catch (error) {
        await first?.close().catch(() => undefined);
        setState('stopped', messageOf(error));
        throw new Error(`the NATS server cannot be used: ${messageOf(error)}`, { cause: error });
      }
      void run(first, true);
    },
    async stop() {
      const conn = nc;
      setState('stopped', 'stopped');
      clearTimeout(timer);
      wakeTimer?.();
      nc = null;
      if (conn === null) return;
      // Acknowledgements written before the stop reach the server if it answers within a moment; then close.
      const grace = new Promise((resolve) => {
        setTimeout(resolve, STOP_FLUSH_MS).unref();
      });
      await Promise.race([conn.flush().catch(() => undefined), grace]);
      await conn.close().catch(() => undefined);
    },
  };
}
