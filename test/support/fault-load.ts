/**
 * Load and bookkeeping of the fault-injection suite (test/faults, docs/guides/failure-table.md): a bounded publish
 * load, the ledger of acknowledged messages, and the figures of the pass criterion (every acknowledged message
 * accepted by the receiver; duplicates counted; signatures valid), printed as one `fault-summary` line.
 */
import { randomBytes } from 'node:crypto';
import type { ApiClient } from './fault-world.ts';
import type { ReceivedRequest } from './test-receiver.ts';

/** True when the receiver took the request: it answered (no stall, no dropped connection) with a 2xx. */
export function acceptedByReceiver(r: ReceivedRequest): boolean {
  const a = r.answer;
  if (a.stall === true || a.destroy === true || a.stallAfterHeaders === true) return false;
  const status = a.status ?? 200;
  return status >= 200 && status < 300;
}

/** One publish try of a load: when it was sent and answered (test wall clock) and what came back. */
export interface Answer {
  readonly sentAtMs: number;
  readonly answeredAtMs: number;
  readonly status: number | 'network';
  readonly id: string | null;
}

/** Options of {@link startLoad}. Every load is bounded in count and in time. */
export interface LoadOptions {
  /** The API to publish to; null while it is down (the try is skipped and counted as `network`). */
  readonly api: () => ApiClient | null;
  readonly appId: string;
  /** Receiver paths each message fans out to. */
  readonly paths: readonly string[];
  readonly ledger: Ledger;
  /** Most messages to publish. */
  readonly maxMessages: number;
  /** Stop publishing after this long, ms. */
  readonly maxMs: number;
  /** Publishers running at once. */
  readonly concurrency: number;
  /** Pause of each publisher between two publishes, ms (pacing of the load, not synchronisation). */
  readonly paceMs: number;
  /**
   * With an Idempotency-Key, retry a message (same key) on 503 / 409 / network errors until it is
   * accepted or `maxTries` is reached; without, each message is tried once.
   */
  readonly retry?: { readonly maxTries: number; readonly backoffMs: number };
}

/** A running load. */
export interface Load {
  /** Every publish try so far. */
  readonly answers: readonly Answer[];
  /** Messages accepted (2xx) so far. */
  readonly accepted: number;
  /** Resolves once `predicate` holds over the answers (checked after each answer); rejects after `timeoutMs`. */
  waitFor(predicate: (answers: readonly Answer[]) => boolean, timeoutMs: number, what: string): Promise<void>;
  /** Stops starting new messages and waits for those in flight. */
  stop(): Promise<void>;
  /** Resolves when the load ended by itself (count or time) or was stopped. */
  readonly done: Promise<void>;
}

/** Starts a bounded publish load; every accepted message goes into the ledger. */
export function startLoad(options: LoadOptions): Load {
  const answers: Answer[] = [];
  const waiters = new Set<{
    predicate: (a: readonly Answer[]) => boolean;
    resolve: () => void;
    reject: (error: Error) => void;
  }>();
  let started = 0;
  let accepted = 0;
  let stopped = false;
  const endAtMs = Date.now() + options.maxMs;
  const record = (answer: Answer): void => {
    answers.push(answer);
    if (answer.id !== null) {
      accepted += 1;
      options.ledger.accept(answer.id, options.paths);
    }
    for (const w of [...waiters]) if (w.predicate(answers)) w.resolve();
  };
  const tryOnce = async (n: number, key: string | undefined): Promise<Answer> => {
    const sentAtMs = Date.now();
    const client = options.api();
    let answer: Answer;
    if (client === null) answer = { sentAtMs, answeredAtMs: sentAtMs, status: 'network', id: null };
    else {
      try {
        const res = await client.publish(options.appId, { n, at: sentAtMs }, key, AbortSignal.timeout(15_000));
        answer = { sentAtMs, answeredAtMs: Date.now(), status: res.status, id: res.id };
      } catch {
        answer = { sentAtMs, answeredAtMs: Date.now(), status: 'network', id: null };
      }
    }
    record(answer);
    return answer;
  };
  const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
  const publisher = async (): Promise<void> => {
    while (!stopped && started < options.maxMessages && Date.now() < endAtMs) {
      started += 1;
      const n = started;
      if (options.retry === undefined) await tryOnce(n, undefined);
      else {
        const key = `load-${n}-${randomBytes(6).toString('hex')}`;
        for (let i = 0; i < options.retry.maxTries; i++) {
          const answer = await tryOnce(n, key);
          if (answer.id !== null || (typeof answer.status === 'number' && ![409, 500, 503].includes(answer.status)))
            break;
          await pause(options.retry.backoffMs);
        }
      }
      await pause(options.paceMs);
    }
  };
  let ended = false;
  const done = Promise.all(Array.from({ length: options.concurrency }, () => publisher())).then(() => {
    stopped = true;
    ended = true;
    for (const w of [...waiters]) {
      if (w.predicate(answers)) w.resolve();
      else
        w.reject(
          new Error(
            `the load ended (${answers.length} answers, ${accepted} accepted) before the awaited condition held`,
          ),
        );
    }
  });
  return {
    answers,
    get accepted() {
      return accepted;
    },
    waitFor(predicate, timeoutMs, what) {
      if (predicate(answers)) return Promise.resolve();
      if (ended)
        return Promise.reject(
          new Error(`load.waitFor(${what}): the load has ended (${answers.length} answers, ${accepted} accepted)`),
        );
      return new Promise((resolve, reject) => {
        const waiter = {
          predicate,
          resolve: () => {
            clearTimeout(timer);
            waiters.delete(waiter);
            resolve();
          },
          reject: (error: Error) => {
            clearTimeout(timer);
            waiters.delete(waiter);
            reject(new Error(`load.waitFor(${what}): ${error.message}`));
          },
        };
        const timer = setTimeout(() => {
          waiters.delete(waiter);
          reject(
            new Error(
              `load.waitFor(${what}): not met within ${timeoutMs} ms; ${answers.length} answers, ${accepted} accepted`,
            ),
          );
        }, timeoutMs);
        waiters.add(waiter);
      });
    },
    async stop() {
      stopped = true;
      await done;
    },
    done,
  };
}

/** The figures of one scenario's run (the pass criterion of docs/guides/failure-table.md). */
export interface Figures {
  /** Deliveries expected: acknowledged messages × the endpoints each fans out to. */
  readonly messages: number;
  /** Expected (endpoint path, webhook-id) pairs the receiver never accepted (answered 2xx). */
  readonly lost: number;
  /**
   * Accepted (2xx-answered) requests beyond the first for each (path, webhook-id): the receiver got the
   * event again after it had taken it. A request it refused (e.g. a scripted 500) is a failed attempt, not
   * a duplicate.
   */
  readonly duplicates: number;
  /** Every request the receiver recorded for these deliveries. */
  readonly requests: number;
  /** Requests whose signature standardwebhooks refused. */
  readonly invalidSignatures: number;
  /** Requests carrying an id that was never acknowledged (a publish whose answer was lost may still deliver). */
  readonly unacknowledged: number;
}

/**
 * The bookkeeping of acknowledged messages: which (path, webhook-id) pairs the receiver must see.
 */
export class Ledger {
  readonly #expected = new Map<string, Set<string>>();

  /** Records that message `id` was acknowledged (2xx) and fans out to `paths`. */
  accept(id: string, paths: readonly string[]): void {
    this.#expected.set(id, new Set(paths));
  }

  /** Acknowledged message ids. */
  get ids(): readonly string[] {
    return [...this.#expected.keys()];
  }

  /** Number of expected deliveries. */
  get deliveries(): number {
    let n = 0;
    for (const paths of this.#expected.values()) n += paths.size;
    return n;
  }

  /** True when every expected (path, id) pair is among `requests`. */
  allSeen(requests: readonly ReceivedRequest[]): boolean {
    return this.figures(requests).lost === 0;
  }

  /** Counts lost, duplicates and bad signatures over the receiver's records. */
  figures(requests: readonly ReceivedRequest[]): Figures {
    const seen = new Map<string, number>();
    let invalidSignatures = 0;
    let unacknowledged = 0;
    let counted = 0;
    for (const r of requests) {
      if (r.webhookId === null || !this.#expected.has(r.webhookId)) unacknowledged += 1;
      else counted += 1;
      if (r.signatureValid !== true) invalidSignatures += 1;
      if (!acceptedByReceiver(r)) continue;
      const key = `${r.path} ${r.webhookId ?? ''}`;
      seen.set(key, (seen.get(key) ?? 0) + 1);
    }
    let lost = 0;
    let duplicates = 0;
    for (const [id, paths] of this.#expected) {
      for (const path of paths) {
        const n = seen.get(`${path} ${id}`) ?? 0;
        if (n === 0) lost += 1;
        else duplicates += n - 1;
      }
    }
    return { messages: this.deliveries, lost, duplicates, requests: counted, invalidSignatures, unacknowledged };
  }

  /** The expected pairs not yet accepted by the receiver (for failure messages), at most `limit`. */
  missing(requests: readonly ReceivedRequest[], limit = 10): string[] {
    const seen = new Set(requests.filter(acceptedByReceiver).map((r) => `${r.path} ${r.webhookId ?? ''}`));
    const out: string[] = [];
    for (const [id, paths] of this.#expected) {
      for (const path of paths) if (!seen.has(`${path} ${id}`) && out.length < limit) out.push(`${path} ${id}`);
    }
    return out;
  }
}

/**
 * Prints the summary line of a scenario (docs/guides/failure-table.md: messages, lost, duplicates), greppable as
 * `fault-summary`, and returns it.
 */
export function printSummary(
  scenario: string,
  figures: Figures,
  startedAtMs: number,
  extra: Record<string, unknown> = {},
): string {
  const seconds = ((Date.now() - startedAtMs) / 1000).toFixed(1);
  const more = Object.entries(extra)
    .map(([k, v]) => ` ${k}=${typeof v === 'string' ? JSON.stringify(v) : String(v)}`)
    .join('');
  const line =
    `fault-summary scenario="${scenario}" messages=${figures.messages} lost=${figures.lost} ` +
    `duplicates=${figures.duplicates} requests=${figures.requests} invalid_signatures=${figures.invalidSignatures} ` +
    `time_s=${seconds}${more}`;
  console.log(line);
  return line;
}
