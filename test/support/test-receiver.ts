import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type {
  ReceivedRequest,
  ReceiverCommand,
  ReceiverEvent,
  ReceiverInit,
  ReceiverStep,
} from './receiver-process.ts';

export type { ReceivedRequest, ReceiverStep } from './receiver-process.ts';

const CHILD_SCRIPT = fileURLToPath(new URL('./receiver-process.ts', import.meta.url));

/** Options of {@link startTestReceiver}. */
export interface TestReceiverOptions {
  /** Endpoint secrets (`whsec_…`) per path; a request verifies when any of its path's secrets accepts it. */
  readonly secrets?: Readonly<Record<string, string | readonly string[]>>;
  /** The answer of a path without a script, or whose script ran out without a fallback (default 200). */
  readonly defaultStep?: ReceiverStep;
  /** How long to wait for the child to listen, in ms (default 10 000). */
  readonly startTimeoutMs?: number;
}

/**
 * A real HTTP receiver in a child process on 127.0.0.1 (the end-to-end tests in test/e2e/). Every request is
 * verified with the public `standardwebhooks` package and recorded; answers follow a per-path script.
 * Records are pushed to this process as they arrive, so waiting is event-driven, never a sleep.
 */
export interface TestReceiver {
  /** `http://127.0.0.1:<port>`. */
  readonly origin: string;
  readonly port: number;
  /** Process id of the child (fault injection: stop or kill the receiver). */
  readonly pid: number;
  /**
   * The URL of a path on this receiver.
   * @param path starts with `/`, e.g. `/ep-1`; may carry a query string, which scripts and secrets ignore.
   */
  url(path: string): string;
  /**
   * Sets the secret(s) that requests to `path` are verified with (rotation: several). Rejects when `standardwebhooks`
   * refuses one.
   */
  setSecret(path: string, secret: string | readonly string[]): Promise<void>;
  /**
   * Scripts the answers for `path`: each request takes the next step; when they run out, `fallback`
   * answers (default: the receiver's default step, 200). Replaces any earlier script of the path.
   * @example receiver.script('/ep', [{ status: 500 }, { status: 500 }]) // then 200
   * @example receiver.script('/ep', [], { status: 503 }) // always 503
   */
  script(path: string, steps: readonly ReceiverStep[], fallback?: ReceiverStep): Promise<void>;
  /** Every request received so far, in arrival order (including every request whose answer a client has seen). */
  requests(): Promise<readonly ReceivedRequest[]>;
  /**
   * Resolves with the records once `predicate` holds over them; it is evaluated now and after each
   * newly received request (keep it cheap: it sees the whole list each time).
   * @param timeoutMs bound; then rejects with `what`, the count and the last records received.
   * @throws Error on timeout, when the child exits, or when the predicate throws.
   */
  waitFor(
    predicate: (requests: readonly ReceivedRequest[]) => boolean,
    timeoutMs: number,
    what?: string,
  ): Promise<readonly ReceivedRequest[]>;
  /**
   * {@link TestReceiver.waitFor} until `count` requests (optionally only those matching `filter`) arrived; resolves
   * with those.
   */
  waitForCount(
    count: number,
    timeoutMs: number,
    filter?: (request: ReceivedRequest) => boolean,
  ): Promise<readonly ReceivedRequest[]>;
  /** Forgets the records and the scripts (secrets stay); `seq` starts again at 1. */
  reset(): Promise<void>;
  /** Closes every connection (stalled ones too) and ends the child. Idempotent. */
  stop(): Promise<void>;
}

interface Waiter {
  readonly predicate: (requests: readonly ReceivedRequest[]) => boolean;
  readonly resolve: (requests: readonly ReceivedRequest[]) => void;
  readonly reject: (error: Error) => void;
  readonly timer: NodeJS.Timeout;
}

/**
 * Starts a {@link TestReceiver}: spawns `receiver-process.ts` with `process.execPath` (the Node that runs
 * the tests, never a `node` from PATH) and waits until it listens.
 * @throws Error when the child exits or does not listen within `startTimeoutMs`.
 */
export async function startTestReceiver(options: TestReceiverOptions = {}): Promise<TestReceiver> {
  const init: ReceiverInit = {
    secrets: Object.fromEntries(
      Object.entries(options.secrets ?? {}).map(([path, s]) => [path, typeof s === 'string' ? [s] : [...s]]),
    ),
    defaultStep: options.defaultStep ?? { status: 200 },
  };
  const child = spawn(process.execPath, [CHILD_SCRIPT, JSON.stringify(init)], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    serialization: 'json',
  });
  const port = await waitUntilListening(child, options.startTimeoutMs ?? 10_000);
  return new ChildReceiver(child, port);
}

function waitUntilListening(child: ChildProcess, timeoutMs: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      cleanup();
      child.kill('SIGKILL');
      reject(new Error(`test receiver did not listen within ${timeoutMs} ms`));
    }, timeoutMs);
    const onMessage = (event: ReceiverEvent) => {
      if (event.type !== 'ready') return;
      cleanup();
      resolve(event.port);
    };
    const onExit = (code: number | null, signal: string | null) => {
      cleanup();
      reject(new Error(`test receiver exited before listening (code ${code}, signal ${signal}); see its stderr above`));
    };
    const onError = (error: Error) => {
      cleanup();
      reject(new Error('test receiver could not be started', { cause: error }));
    };
    function cleanup() {
      clearTimeout(timer);
      child.off('message', onMessage);
      child.off('exit', onExit);
      child.off('error', onError);
    }
    child.on('message', onMessage);
    child.on('exit', onExit);
    child.on('error', onError);
  });
}

class ChildReceiver implements TestReceiver {
  readonly origin: string;
  readonly port: number;
  readonly pid: number;
  readonly #child: ChildProcess;
  #records: ReceivedRequest[] = [];
  readonly #waiters = new Set<Waiter>();
  readonly #acks = new Map<number, { resolve: () => void; reject: (error: Error) => void }>();
  #nextId = 1;
  #evaluationQueued = false;
  #exited: Error | null = null;
  readonly #exit: Promise<void>;

  constructor(child: ChildProcess, port: number) {
    this.#child = child;
    this.port = port;
    this.origin = `http://127.0.0.1:${port}`;
    this.pid = child.pid ?? -1;
    this.#exit = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        this.#exited = new Error(`test receiver process exited (code ${code}, signal ${signal})`);
        for (const ack of this.#acks.values()) ack.reject(this.#exited);
        this.#acks.clear();
        for (const waiter of this.#waiters) waiter.reject(this.#exited);
        this.#waiters.clear();
        resolve();
      });
    });
    child.on('message', (event: ReceiverEvent) => this.#onEvent(event));
    // The child must not keep the test process alive; only pending calls hold the channel (see #hold).
    child.unref();
    this.#release();
  }

  url(path: string): string {
    if (!path.startsWith('/'))
      throw new Error(`TestReceiver.url: path must start with "/", got ${JSON.stringify(path)}`);
    return `${this.origin}${path}`;
  }

  async setSecret(path: string, secret: string | readonly string[]): Promise<void> {
    await this.#command({ type: 'secret', id: 0, path, secrets: typeof secret === 'string' ? [secret] : [...secret] });
  }

  async script(path: string, steps: readonly ReceiverStep[], fallback?: ReceiverStep): Promise<void> {
    await this.#command({ type: 'script', id: 0, path, steps, fallback: fallback ?? null });
  }

  async requests(): Promise<readonly ReceivedRequest[]> {
    // IPC keeps order: once the child answers this sync, every record it sent before has been handled.
    await this.#command({ type: 'sync', id: 0 });
    return [...this.#records];
  }

  waitFor(
    predicate: (requests: readonly ReceivedRequest[]) => boolean,
    timeoutMs: number,
    what = 'condition',
  ): Promise<readonly ReceivedRequest[]> {
    if (this.#exited !== null) return Promise.reject(this.#exited);
    return new Promise((resolve, reject) => {
      try {
        if (predicate(this.#records)) {
          resolve([...this.#records]);
          return;
        }
      } catch (error) {
        reject(error as Error);
        return;
      }
      this.#hold();
      const timer = setTimeout(() => {
        settle();
        reject(
          new Error(
            `TestReceiver.waitFor(${what}): not met within ${timeoutMs} ms; ${this.#records.length} requests ` +
              `received${summary(this.#records)}`,
          ),
        );
      }, timeoutMs);
      const settle = () => {
        clearTimeout(timer);
        this.#waiters.delete(waiter);
        this.#release();
      };
      const waiter: Waiter = {
        predicate,
        timer,
        resolve: (records) => {
          settle();
          resolve(records);
        },
        reject: (error) => {
          settle();
          reject(error);
        },
      };
      this.#waiters.add(waiter);
    });
  }

  async waitForCount(
    count: number,
    timeoutMs: number,
    filter: (request: ReceivedRequest) => boolean = () => true,
  ): Promise<readonly ReceivedRequest[]> {
    let matched: ReceivedRequest[] = [];
    let seen = 0;
    // Incremental: each record is filtered once, so waiting for thousands of requests stays linear.
    await this.waitFor(
      (records) => {
        if (records.length < seen) {
          matched = [];
          seen = 0;
        }
        for (; seen < records.length; seen += 1) {
          const record = records[seen];
          if (record !== undefined && filter(record)) matched.push(record);
        }
        return matched.length >= count;
      },
      timeoutMs,
      `${count} matching requests`,
    );
    return matched.slice(0, count);
  }

  async reset(): Promise<void> {
    await this.#command({ type: 'reset', id: 0 });
    this.#records = [];
  }

  async stop(): Promise<void> {
    if (this.#exited === null && this.#child.connected) {
      this.#hold();
      this.#child.send({ type: 'stop', id: 0 } satisfies ReceiverCommand);
      const killTimer = setTimeout(() => this.#child.kill('SIGKILL'), 5_000);
      await this.#exit;
      clearTimeout(killTimer);
      this.#release();
    } else if (this.#exited === null) {
      this.#child.kill('SIGKILL');
      await this.#exit;
    }
  }

  #holds = 0;
  /** Keeps the IPC channel referenced while a call waits on the child, so the event loop cannot end under it. */
  #hold(): void {
    this.#holds += 1;
    if (this.#holds === 1) this.#child.channel?.ref();
  }
  #release(): void {
    this.#holds = Math.max(0, this.#holds - 1);
    if (this.#holds === 0) this.#child.channel?.unref();
  }

  #command(command: ReceiverCommand): Promise<void> {
    if (this.#exited !== null) return Promise.reject(this.#exited);
    const id = this.#nextId;
    this.#nextId += 1;
    this.#hold();
    return new Promise<void>((resolve, reject) => {
      this.#acks.set(id, { resolve, reject });
      this.#child.send({ ...command, id });
    }).finally(() => this.#release());
  }

  #onEvent(event: ReceiverEvent): void {
    if (event.type === 'request') {
      this.#records.push(event.request);
      this.#queueEvaluation();
    } else if (event.type === 'ack') {
      const ack = this.#acks.get(event.id);
      this.#acks.delete(event.id);
      if (event.error === null) ack?.resolve();
      else ack?.reject(new Error(`test receiver: ${event.error}`));
    }
  }

  /** Evaluates waiters once per burst of IPC messages rather than once per record. */
  #queueEvaluation(): void {
    if (this.#evaluationQueued) return;
    this.#evaluationQueued = true;
    setImmediate(() => {
      this.#evaluationQueued = false;
      for (const waiter of [...this.#waiters]) {
        try {
          if (waiter.predicate(this.#records)) waiter.resolve([...this.#records]);
        } catch (error) {
          waiter.reject(error as Error);
        }
      }
    });
  }
}

function summary(records: readonly ReceivedRequest[]): string {
  if (records.length === 0) return '';
  const last = records
    .slice(-5)
    .map(
      (r) =>
        `#${r.seq} ${r.method} ${r.path} id=${r.webhookId} valid=${r.signatureValid} ` +
        `answer=${JSON.stringify(r.answer)}`,
    );
  return `; last: ${last.join(' | ')}`;
}
