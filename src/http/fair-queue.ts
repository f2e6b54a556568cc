/** A place in a {@link FairQueue}: `cancel` takes a waiting request out (no effect once admitted). */
export interface Waiting {
  cancel(): void;
}

/**
 * Fair admission of requests between credentials (ADR 0027): at most `slots` requests run at once, apart from
 * a credential's first: a credential with nothing running is admitted at once, whatever the others hold, so a
 * flood never makes a quiet credential wait for a slot. A request of a credential that already runs one waits
 * while every slot is taken, in its credential's FIFO queue; the credentials with waiting requests are served in
 * turn (round robin, one request each), so a credential with a deep backlog gets one slot in turn with each
 * other credential waiting, and every slot when no other waits.
 *
 * Single-threaded and synchronous: `admit` callbacks run inside `enter` or `release`.
 */
export class FairQueue {
  readonly #slots: number;
  /** Requests running, by credential; a credential whose count falls to zero is forgotten. */
  readonly #running = new Map<string, number>();
  #runningTotal = 0;
  /** Waiting requests by credential; the Map's order is the round-robin turn (the next to serve first). */
  readonly #waiting = new Map<string, (() => void)[]>();

  constructor(slots: number) {
    if (!Number.isInteger(slots) || slots < 1) throw new RangeError(`slots must be a whole number ≥ 1 (got ${slots})`);
    this.#slots = slots;
  }

  /** Requests running now (those admitted and not yet released). */
  get running(): number {
    return this.#runningTotal;
  }

  /** Requests waiting now, over every credential. */
  get waiting(): number {
    let n = 0;
    for (const q of this.#waiting.values()) n += q.length;
    return n;
  }

  /**
   * Asks a slot for a request of `key`. `admit` is called once the request may run — at once (before `enter`
   * returns) when a slot is free or `key` runs nothing — and the caller must then call {@link release} once
   * when it ends. Returns null when admitted at once, else the request's place in its credential's queue.
   */
  enter(key: string, admit: () => void): Waiting | null {
    const mine = this.#running.get(key) ?? 0;
    if ((mine === 0 && !this.#waiting.has(key)) || (this.#runningTotal < this.#slots && this.#waiting.size === 0)) {
      this.#start(key);
      admit();
      return null;
    }
    let queue = this.#waiting.get(key);
    if (queue === undefined) {
      queue = [];
      this.#waiting.set(key, queue);
    }
    const q = queue;
    q.push(admit);
    return {
      cancel: () => {
        const at = q.indexOf(admit);
        if (at < 0) return;
        q.splice(at, 1);
        if (q.length === 0 && this.#waiting.get(key) === q) this.#waiting.delete(key);
      },
    };
  }

  /** Ends a running request of `key` and admits waiting ones, in turn, while slots are free. */
  release(key: string): void {
    const mine = this.#running.get(key);
    if (mine === undefined) return;
    if (mine <= 1) this.#running.delete(key);
    else this.#running.set(key, mine - 1);
    this.#runningTotal -= 1;
    this.#admitWaiting();
    // A credential keeps one request running while it has any waiting, slots or not (its first's right).
    const queue = this.#waiting.get(key);
    if (queue !== undefined && !this.#running.has(key)) this.#admitHead(key, queue);
  }

  #start(key: string): void {
    this.#running.set(key, (this.#running.get(key) ?? 0) + 1);
    this.#runningTotal += 1;
  }

  /** Serves the credential whose turn it is, one request, then moves it to the end of the turn. */
  #admitWaiting(): void {
    while (this.#runningTotal < this.#slots) {
      const next = this.#waiting.entries().next();
      if (next.done === true) return;
      this.#admitHead(...next.value);
    }
  }

  /** Admits the first waiting request of `key` and moves `key` to the end of the turn. */
  #admitHead(key: string, queue: (() => void)[]): void {
    const admit = queue.shift()!;
    this.#waiting.delete(key);
    if (queue.length > 0) this.#waiting.set(key, queue);
    this.#start(key);
    admit();
  }
}
