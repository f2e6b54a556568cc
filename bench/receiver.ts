import { fileURLToPath } from 'node:url';
import { sleep, startChild, type Child } from './procs.ts';
import type { ReceiverCommand, ReceiverInit, ReceiverReply, ReceiverStats } from './receiver-process.ts';

const SCRIPT = fileURLToPath(new URL('./receiver-process.ts', import.meta.url));

/** A running benchmark receiver (receiver-process.ts) seen from the parent. */
export interface Receiver {
  readonly child: Child;
  /** Ports it listens on, all on 127.0.0.1. */
  readonly ports: readonly number[];
  readonly delayMs: number;
  stats(): Promise<ReceiverStats>;
  /** First arrival per delivery, keyed `<webhook-id>@<path>` (Unix ms on this machine's clock). */
  times(): Promise<Map<string, number>>;
  /** Clears counters and arrival times. */
  reset(): Promise<void>;
  /**
   * Polls until `unique` reaches `count`, or nothing new arrived for `idleMs`, or `timeoutMs` passed.
   * Returns the last stats; the caller compares `unique` with what it expected.
   */
  waitForUnique(count: number, timeoutMs: number, idleMs?: number): Promise<ReceiverStats>;
  /**
   * Polls until every one of `keys` (`<webhook-id>@<path>`) has arrived, or nothing new arrived for
   * `idleMs`, or `timeoutMs` passed; returns the arrival times then (a key without one did not arrive).
   * Unlike {@link waitForUnique} it is not fooled by stragglers of an earlier phase.
   */
  waitForKeys(keys: readonly string[], timeoutMs: number, idleMs?: number): Promise<Map<string, number>>;
  stop(): Promise<void>;
}

/** Starts a receiver child: `delayMs` before each 200, on `ports` loopback ports. */
export async function startReceiver(init: ReceiverInit, logFile?: string): Promise<Receiver> {
  const child = startChild({
    name: `receiver-${init.delayMs}ms`,
    args: [SCRIPT, JSON.stringify(init)],
    env: { PATH: process.env.PATH },
    ipc: true,
    ...(logFile === undefined ? {} : { logFile }),
  });
  const pending = new Map<number, (reply: ReceiverReply) => void>();
  let nextId = 1;
  const ready = new Promise<readonly number[]>((resolve, reject) => {
    child.process.on('message', (message: ReceiverReply) => {
      if (message.type === 'ready') resolve(message.ports);
      else {
        const resolver = pending.get(message.id);
        pending.delete(message.id);
        resolver?.(message);
      }
    });
    void child.exited.then((code) => reject(new Error(`receiver exited (${code}) before it was ready`)));
  });
  const ports = await ready;
  const ask = <T extends ReceiverReply['type']>(
    type: ReceiverCommand['type'],
  ): Promise<Extract<ReceiverReply, { type: T }>> =>
    new Promise((resolve, reject) => {
      const id = nextId++;
      pending.set(id, (r) => resolve(r as Extract<ReceiverReply, { type: T }>));
      child.process.send({ type, id } as ReceiverCommand, (error) => {
        if (error !== null) {
          pending.delete(id);
          reject(error);
        }
      });
    });

  const receiver: Receiver = {
    child,
    ports,
    delayMs: init.delayMs,
    stats: async () => (await ask<'stats'>('stats')).stats,
    async times() {
      const r = await ask<'times'>('times');
      const out = new Map<string, number>();
      r.ids.forEach((id, i) => out.set(id, r.at[i] ?? Number.NaN));
      return out;
    },
    async reset() {
      await ask<'ack'>('reset');
    },
    async waitForUnique(count, timeoutMs, idleMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      let last = await receiver.stats();
      let lastChange = Date.now();
      while (last.unique < count && Date.now() < deadline && Date.now() - lastChange < idleMs) {
        await sleep(50);
        const s = await receiver.stats();
        if (s.requests !== last.requests) lastChange = Date.now();
        last = s;
      }
      return last;
    },
    async waitForKeys(keys, timeoutMs, idleMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      let lastRequests = -1;
      let lastChange = Date.now();
      for (;;) {
        const s = await receiver.stats();
        if (s.requests !== lastRequests) {
          lastRequests = s.requests;
          lastChange = Date.now();
        }
        const done = Date.now() >= deadline || Date.now() - lastChange >= idleMs;
        if (s.unique >= keys.length || done) {
          const times = await receiver.times();
          if (done || keys.every((k) => times.has(k))) return times;
        }
        await sleep(s.unique >= keys.length ? 250 : 50);
      }
    },
    async stop() {
      try {
        await Promise.race([ask<'ack'>('stop'), sleep(1_000)]);
      } catch {
        // already gone
      }
      await child.stop(2_000);
    },
  };
  return receiver;
}
