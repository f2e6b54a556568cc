/**
 * Statement timing for the benchmark, preloaded into a Tidings process with `--import bench/pg-probe.ts`
 * (tidings.ts does this with `--probe`). It wraps `pg.Client.prototype.query` and `pg.Pool.prototype.connect`
 * of the `pg` module that Tidings itself loads, and records per statement: calls, total and max client-side
 * time (send → result: one round trip plus server execution, without waiting for a pool connection) and a
 * sample for percentiles; and per pool: connection waits. The shared server has no pg_stat_statements
 * preloaded and its settings are not the benchmark's to change, so this is measured from the client.
 *
 * Statements are named by the first SQL keyword line, or by the constant of delivery-sql.ts they equal.
 * The totals are written as JSON to BENCH_PROBE_OUT when the process exits (and on SIGUSR2).
 * Measuring adds a few microseconds per statement; figures of a probed run are marked as such.
 */
import { writeFileSync } from 'node:fs';
import pg from 'pg';
import * as deliverySql from '../src/adapters/postgres/delivery/delivery-sql.ts';

/** Totals of one statement. Times in ms. */
export interface ProbeStatement {
  readonly calls: number;
  readonly totalMs: number;
  readonly maxMs: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly rows: number;
}

/** The file written by the probe. */
export interface ProbeDump {
  readonly pid: number;
  readonly uptimeMs: number;
  readonly statements: Readonly<Record<string, ProbeStatement>>;
  /** Time spent waiting for a pool connection (`pool.connect`, including `pool.query`'s implicit one). */
  readonly poolWait: ProbeStatement;
}

interface Acc {
  calls: number;
  totalMs: number;
  maxMs: number;
  rows: number;
  sample: number[];
}

const SAMPLE_MAX = 20_000;
const named = new Map<string, string>(
  Object.entries(deliverySql).flatMap(([k, v]) => (typeof v === 'object' && 'text' in v ? [[v.text, k] as const] : [])),
);
const byName = new Map<string, Acc>();
const poolWait: Acc = { calls: 0, totalMs: 0, maxMs: 0, rows: 0, sample: [] };

function nameOf(text: string): string {
  const constant = named.get(text);
  if (constant !== undefined) return constant;
  const compact = text.replace(/\s+/g, ' ').trim();
  return compact.length > 70 ? `${compact.slice(0, 70)}…` : compact;
}

function add(acc: Acc, ms: number, rows: number): void {
  acc.calls += 1;
  acc.totalMs += ms;
  acc.rows += rows;
  if (ms > acc.maxMs) acc.maxMs = ms;
  if (acc.sample.length < SAMPLE_MAX) acc.sample.push(ms);
  else acc.sample[Math.floor(Math.random() * acc.calls) % SAMPLE_MAX] = ms;
}

function summary(acc: Acc): ProbeStatement {
  const sorted = [...acc.sample].sort((a, b) => a - b);
  const at = (q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
  return {
    calls: acc.calls,
    totalMs: round(acc.totalMs),
    maxMs: round(acc.maxMs),
    p50Ms: round(at(0.5)),
    p99Ms: round(at(0.99)),
    rows: acc.rows,
  };
}

const round = (n: number): number => Math.round(n * 1000) / 1000;

type AnyFn = (...args: unknown[]) => unknown;
const clientProto = pg.Client.prototype as unknown as { query: AnyFn };
const originalQuery = clientProto.query;
clientProto.query = function probedQuery(this: unknown, ...args: unknown[]): unknown {
  const first = args[0];
  const text =
    typeof first === 'string'
      ? first
      : typeof first === 'object' && first !== null && 'text' in first
        ? String((first as { text: unknown }).text)
        : null;
  if (text === null) return originalQuery.apply(this, args);
  const name = nameOf(text);
  let acc = byName.get(name);
  if (acc === undefined) byName.set(name, (acc = { calls: 0, totalMs: 0, maxMs: 0, rows: 0, sample: [] }));
  const started = performance.now();
  const done = (result: unknown): void =>
    add(acc, performance.now() - started, (result as { rowCount?: number } | undefined)?.rowCount ?? 0);
  const last = args.length - 1;
  const callback = args[last];
  if (typeof callback === 'function') {
    args[last] = (error: unknown, result: unknown) => {
      done(result);
      return (callback as AnyFn)(error, result);
    };
    return originalQuery.apply(this, args);
  }
  const out = originalQuery.apply(this, args);
  if (out !== undefined && typeof (out as Promise<unknown>).then === 'function') {
    (out as Promise<unknown>).then(done, () => done(undefined));
  }
  return out;
};

const poolProto = pg.Pool.prototype as unknown as { connect: AnyFn };
const originalConnect = poolProto.connect;
poolProto.connect = function probedConnect(this: unknown, ...args: unknown[]): unknown {
  const started = performance.now();
  const callback = args[0];
  if (typeof callback === 'function') {
    return originalConnect.call(this, (error: unknown, client: unknown, release: unknown) => {
      add(poolWait, performance.now() - started, 0);
      return (callback as AnyFn)(error, client, release);
    });
  }
  const out = originalConnect.apply(this, args) as Promise<unknown>;
  out.then(
    () => add(poolWait, performance.now() - started, 0),
    () => undefined,
  );
  return out;
};

function dump(): void {
  const out = process.env.BENCH_PROBE_OUT;
  if (out === undefined || out === '') return;
  const statements: Record<string, ProbeStatement> = {};
  for (const [name, acc] of byName) statements[name] = summary(acc);
  const file: ProbeDump = {
    pid: process.pid,
    uptimeMs: Math.round(performance.now()),
    statements,
    poolWait: summary(poolWait),
  };
  try {
    writeFileSync(out, JSON.stringify(file, null, 1));
  } catch {
    // the benchmark reports a missing dump
  }
}

process.on('exit', dump);
process.on('SIGUSR2', dump);
