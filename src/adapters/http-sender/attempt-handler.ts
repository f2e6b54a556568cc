import type { Dispatcher } from 'undici';
import type { SendResult } from '../../domain/attempt-outcome.ts';
import { ErrorKind } from '../../domain/error-kinds.ts';
import { AttemptStoppedError, classifyError } from './classify-error.ts';

/**
 * The undici dispatch handler of one attempt: it reads the status line and two headers, keeps a bounded
 * prefix of the body, counts the body bytes and stops at the cap, and turns the end of the exchange into
 * exactly one {@link SendResult}.
 *
 * It uses undici's callback handler form (onConnect / onHeaders / onData / onComplete / onError) because
 * only that form is told when the request was written (`onRequestSent`); the controller form is not.
 * undici 7 supports both.
 */

/** Limits of one attempt's response, in bytes. */
export interface ResponseLimits {
  /** Body bytes read at most; past them the request is aborted and the socket closed. */
  readonly maxResponseBytes: number;
  /** Body bytes kept for the attempt row (≤ maxResponseBytes). */
  readonly responsePrefixBytes: number;
}

/** Reads one header (first occurrence) from undici's raw `[name, value, name, value…]` list. */
function rawHeader(rawHeaders: readonly Buffer[], name: string): string | null {
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    if (rawHeaders[i]?.toString('latin1').toLowerCase() === name) return rawHeaders[i + 1]?.toString('latin1') ?? null;
  }
  return null;
}

/**
 * Decodes the kept prefix as UTF-8. An incomplete character at the cut is dropped (stream mode without the
 * final flush), and NUL becomes U+FFFD so the prefix can be stored in a PostgreSQL `text` column.
 */
function decodePrefix(chunks: readonly Buffer[]): string {
  return new TextDecoder('utf-8').decode(Buffer.concat(chunks), { stream: true }).replaceAll('\u0000', '\uFFFD');
}

/** Collects one attempt's response; `settle` receives the outcome exactly once. */
export class AttemptHandler implements Dispatcher.DispatchHandler {
  readonly #limits: ResponseLimits;
  readonly #startedAt: number;
  readonly #settle: (result: SendResult) => void;
  #abort: ((error?: Error) => void) | null = null;
  #pendingStop: Error | null = null;
  #settled = false;
  #requestSent = false;
  #statusCode = 0;
  #location: string | null = null;
  #retryAfter: string | null = null;
  #bodyBytes = 0;
  #prefixBytes = 0;
  readonly #prefix: Buffer[] = [];

  constructor(limits: ResponseLimits, startedAt: number, settle: (result: SendResult) => void) {
    this.#limits = limits;
    this.#startedAt = startedAt;
    this.#settle = settle;
  }

  /** True once undici wrote the whole request to the socket. */
  get requestSent(): boolean {
    return this.#requestSent;
  }

  /** True once a final (non-1xx) status line arrived. */
  get hasStatus(): boolean {
    return this.#statusCode !== 0;
  }

  /**
   * Stops the attempt with `error` (our deadline or the caller's abort). Before the request is handed to a
   * socket, undici is told at `onConnect` and never writes it; the outcome is settled now either way.
   */
  stop(error: AttemptStoppedError, detail: string): void {
    this.#finish(error, detail);
    if (this.#abort !== null) this.#abort(error);
    else this.#pendingStop = error;
  }

  onConnect(abort: (error?: Error) => void): void {
    if (this.#pendingStop !== null) {
      abort(this.#pendingStop);
      return;
    }
    this.#abort = abort;
  }

  /** Called by undici after the request was written (not part of the published handler type). */
  onRequestSent(): void {
    this.#requestSent = true;
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[], _resume: () => void, _statusText: string): boolean {
    // 1xx (102 Processing, 103 Early Hints) are informational: ignored, and the deadline keeps running.
    if (statusCode < 200) return true;
    this.#statusCode = statusCode;
    this.#retryAfter = rawHeader(rawHeaders, 'retry-after');
    this.#location = statusCode >= 300 && statusCode <= 399 ? rawHeader(rawHeaders, 'location') : null;
    return true;
  }

  onData(chunk: Buffer): boolean {
    this.#bodyBytes += chunk.length;
    const room = this.#limits.responsePrefixBytes - this.#prefixBytes;
    if (room > 0) {
      // A copy, so the prefix never pins undici's (up to 64 KiB) read buffer.
      const kept = Buffer.from(chunk.subarray(0, room));
      this.#prefix.push(kept);
      this.#prefixBytes += kept.length;
    }
    if (this.#bodyBytes > this.#limits.maxResponseBytes && this.#abort !== null) {
      const tooLarge = new AttemptStoppedError(
        'TIDINGS_RESPONSE_TOO_LARGE',
        `response body exceeds ${this.#limits.maxResponseBytes} bytes; the rest was discarded and the ` +
          'connection closed',
      );
      this.#finish(tooLarge, tooLarge.message);
      this.#abort(tooLarge);
      return false;
    }
    return true;
  }

  onComplete(_trailers: string[] | null): void {
    this.#finish(null, '');
  }

  onError(error: Error): void {
    this.#finish(error, null);
  }

  /** Settles once: a response when a final status line arrived, else an error. */
  #finish(error: Error | null, detail: string | null): void {
    if (this.#settled) return;
    this.#settled = true;
    const durationMs = Math.max(0, Math.round(performance.now() - this.#startedAt));
    const classified = error === null ? null : classifyError(error);
    if (this.#statusCode !== 0) {
      this.#settle({
        type: 'response',
        statusCode: this.#statusCode,
        location: this.#location,
        retryAfter: this.#retryAfter,
        bodyPrefix: decodePrefix(this.#prefix),
        bodyError: classified?.errorKind ?? null,
        durationMs,
      });
      return;
    }
    // undici never completes an exchange without a final status line; if it did, it is a protocol failure.
    const failure = classified ?? { errorKind: ErrorKind.protocol, detail: 'the exchange ended without a status line' };
    this.#settle({ type: 'error', errorKind: failure.errorKind, detail: detail ?? failure.detail, durationMs });
  }
}
