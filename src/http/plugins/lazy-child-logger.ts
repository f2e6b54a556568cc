import type { FastifyBaseLogger } from 'fastify';
import type { Bindings, ChildLoggerOptions, LevelWithSilentOrString } from 'pino';

/**
 * Fastify's per-request logger (`request.log`, `reply.log`), made only when the request logs something:
 * Fastify's default calls `logger.child({ reqId })` for every request, and a pino child pays for its
 * bindings at once (serialised, and passed through the redaction of REDACT_PATHS), while most requests write
 * no line through it — the completed-request line goes through its own logger (`OneLineLogController`,
 * src/http/app.ts). The first call of any method makes the same child the default would have made, with the
 * same bindings and options, and every later call goes to it; so a line written through it is the line the
 * default would have written (docs/adr/0016-hot-path-cost.md, decision 8).
 *
 * Pass as Fastify's `childLoggerFactory`. Its `level` reads the parent's until the child exists (a child
 * with its own level in `opts` is made at once, since that level must hold from the start).
 */
export function lazyChildLogger(
  this: unknown,
  logger: FastifyBaseLogger,
  bindings: Bindings,
  opts: ChildLoggerOptions,
): FastifyBaseLogger {
  if (opts.level !== undefined) return logger.child(bindings, opts);
  return new LazyChild(logger, bindings, opts) as unknown as FastifyBaseLogger;
}

type LevelMethod = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

/** The deferred child of {@link lazyChildLogger}: every method makes the real child first, then forwards. */
class LazyChild {
  readonly #parent: FastifyBaseLogger;
  readonly #bindings: Bindings;
  readonly #opts: ChildLoggerOptions;
  #child: FastifyBaseLogger | undefined;

  constructor(parent: FastifyBaseLogger, bindings: Bindings, opts: ChildLoggerOptions) {
    this.#parent = parent;
    this.#bindings = bindings;
    this.#opts = opts;
  }

  #real(): FastifyBaseLogger {
    this.#child ??= this.#parent.child(this.#bindings, this.#opts);
    return this.#child;
  }

  #write(method: LevelMethod, args: unknown[]): void {
    const real = this.#real();
    (real[method] as (...a: unknown[]) => void).apply(real, args);
  }

  get level(): LevelWithSilentOrString {
    return (this.#child ?? this.#parent).level;
  }

  set level(value: LevelWithSilentOrString) {
    this.#real().level = value;
  }

  fatal(...args: unknown[]): void {
    this.#write('fatal', args);
  }
  error(...args: unknown[]): void {
    this.#write('error', args);
  }
  warn(...args: unknown[]): void {
    this.#write('warn', args);
  }
  info(...args: unknown[]): void {
    this.#write('info', args);
  }
  debug(...args: unknown[]): void {
    this.#write('debug', args);
  }
  trace(...args: unknown[]): void {
    this.#write('trace', args);
  }
  silent(...args: unknown[]): void {
    this.#write('silent', args);
  }

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.#real().child(bindings, options);
  }

  bindings(): Bindings {
    return (this.#real() as unknown as { bindings(): Bindings }).bindings();
  }
}
