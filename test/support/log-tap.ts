import { Writable } from 'node:stream';

/** One parsed JSON log line. */
export type LogLine = Record<string, unknown>;

/**
 * A log destination for an in-process Tidings that keeps every JSON line and lets a test wait for one
 * (event-driven: resolves as soon as a matching line is written; rejects after `timeoutMs`).
 */
export class LogTap extends Writable {
  readonly lines: LogLine[] = [];
  #waiters: { predicate: (l: LogLine) => boolean; resolve: (l: LogLine) => void }[] = [];
  #partial = '';

  override _write(chunk: Buffer, _enc: BufferEncoding, done: (error?: Error | null) => void): void {
    const text = this.#partial + chunk.toString('utf8');
    const parts = text.split('\n');
    this.#partial = parts.pop() ?? '';
    for (const part of parts) {
      if (part.trim() === '') continue;
      let line: LogLine;
      try {
        line = JSON.parse(part) as LogLine;
      } catch {
        line = { raw: part };
      }
      this.lines.push(line);
      this.#waiters = this.#waiters.filter((w) => {
        if (!w.predicate(line)) return true;
        w.resolve(line);
        return false;
      });
    }
    done();
  }

  /** All raw text written so far (for scans such as "no secret in the logs"). */
  text(): string {
    return this.lines.map((l) => JSON.stringify(l)).join('\n') + this.#partial;
  }

  /** Resolves once `count` lines (already written or future) match `predicate`; rejects after `timeoutMs`. */
  async waitForCount(
    predicate: (l: LogLine) => boolean,
    count: number,
    timeoutMs: number,
    what = 'log lines',
  ): Promise<LogLine[]> {
    let seen = this.lines.filter(predicate).length;
    if (seen < count) {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => {
          this.#waiters = this.#waiters.filter((w) => w.resolve !== done);
          reject(new Error(`timed out after ${timeoutMs} ms waiting for ${count} ${what}; ${seen} seen`));
        }, timeoutMs);
        const done = (): void => {
          clearTimeout(timer);
          resolve();
        };
        // Counts only lines written from now on (those already written are in `seen`).
        this.#waiters.push({ predicate: (l) => predicate(l) && ++seen >= count, resolve: done });
      });
    }
    return this.lines.filter(predicate);
  }

  /** Resolves with the first line (already written or future) matching `predicate`. */
  waitFor(predicate: (l: LogLine) => boolean, timeoutMs: number, what = 'a log line'): Promise<LogLine> {
    const seen = this.lines.find(predicate);
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#waiters = this.#waiters.filter((w) => w.resolve !== done);
        reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}; ${this.lines.length} lines logged`));
      }, timeoutMs);
      const done = (l: LogLine): void => {
        clearTimeout(timer);
        resolve(l);
      };
      this.#waiters.push({ predicate, resolve: done });
    });
  }
}
