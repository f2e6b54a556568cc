import { loadConfig, type Config } from '../src/config/config.ts';
import type { Options } from './options.ts';
import { runRawHttp, type RawHttpRun } from './raw-http.ts';
import type { Receiver } from './receiver.ts';
import type { FigureBook } from './report.ts';
import { benchPayload } from './load.ts';
import type { ClusterBase } from './tidings.ts';

/** What every scenario needs: options, the cluster settings, the figure book, and the run log. */
export interface BenchContext {
  readonly options: Options;
  readonly base: ClusterBase;
  readonly book: FigureBook;
  /** Details of every run, written to the JSON file as they are. */
  readonly details: Record<string, unknown>[];
  /** Prints one progress line (stderr, so stdout keeps the table). */
  log(line: string): void;
}

/** The configuration Tidings processes get for a scenario's settings (the user's TIDINGS_* first). */
export function effectiveConfig(ctx: BenchContext, env: Readonly<Record<string, string>>): Config {
  return loadConfig({ ...ctx.base.userEnv, ...env });
}

/** Options of {@link rawReference}. */
export interface RawReferenceOptions {
  readonly receiver: Receiver;
  /** Receiver paths, spread over its ports round-robin. */
  readonly paths: number;
  readonly inFlight: number;
  readonly count: number;
  readonly sign: boolean;
  readonly connectionsPerOrigin: number;
  readonly idPrefix: string;
}

/**
 * Runs the raw-HTTP reference against the scenario's receiver (counters reset first): undici → receiver,
 * same payload, same in-flight count, no database.
 */
export async function rawReference(ctx: BenchContext, o: RawReferenceOptions): Promise<RawHttpRun> {
  await o.receiver.reset();
  const urls = Array.from(
    { length: o.paths },
    (_, i) => `http://127.0.0.1:${o.receiver.ports[i % o.receiver.ports.length]}/ep${i}`,
  );
  return runRawHttp(
    {
      urls,
      inFlight: o.inFlight,
      connectionsPerOrigin: o.connectionsPerOrigin,
      sign: o.sign,
      body: benchPayload(ctx.options.payloadBytes, 0),
      idPrefix: o.idPrefix,
      mode: 'burst',
      count: o.count,
      rate: 0,
      durationMs: 0,
      timeoutMs: ctx.options.sizes.waitTimeoutMs,
    },
    undefined,
    o.receiver.child.pid,
  );
}

/** Formats a number with thousands separators for progress lines. */
export function n0(value: number): string {
  return Number.isFinite(value) ? Math.round(value).toLocaleString('en-US') : '—';
}
