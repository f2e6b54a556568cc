import { z } from 'zod';
import ipaddr from 'ipaddr.js';

/*
 * The value parsers of the settings (src/config/settings/), and the shape of one setting's entry.
 */

/** Parses a duration: a bare number is ms; suffixes ms, s, m, h, d are accepted ("5s", "10h", "20ms"). */
export function parseDurationMs(text: string): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$/.exec(text);
  if (match === null) throw new Error(`"${text}" is not a duration (e.g. 500ms, 5s, 30m, 2h)`);
  const value = Number(match[1]);
  const unit = match[2] ?? 'ms';
  const factor = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[unit] ?? 1;
  return Math.round(value * factor);
}

export const int = (min: number, max = Number.MAX_SAFE_INTEGER) => z.coerce.number().int().min(min).max(max);
export const durationMs = (min: number) =>
  z.string().transform((text, ctx) => {
    try {
      const ms = parseDurationMs(text);
      if (ms < min) ctx.addIssue({ code: 'custom', message: `must be at least ${min} ms` });
      return ms;
    } catch (error) {
      ctx.addIssue({ code: 'custom', message: (error as Error).message });
      return z.NEVER;
    }
  });
export const cidrList = z.string().transform((text, ctx) => {
  const parts = text
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p !== '');
  for (const part of parts) {
    try {
      ipaddr.parseCIDR(part);
    } catch {
      ctx.addIssue({ code: 'custom', message: `"${part}" is not a CIDR range (e.g. 127.0.0.1/32, ::1/128)` });
    }
  }
  return parts;
});
export const durationList = z.string().transform((text, ctx) => {
  const parts = text
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p !== '');
  const out: number[] = [];
  for (const part of parts) {
    try {
      out.push(parseDurationMs(part));
    } catch (error) {
      ctx.addIssue({ code: 'custom', message: (error as Error).message });
    }
  }
  return out;
});

/** NATS server URLs, comma-separated (one cluster): nats://, tls://, ws:// or wss://. */
export const natsUrlList = z.string().superRefine((text, ctx) => {
  const parts = text.split(',').map((p) => p.trim());
  for (const part of parts) {
    let protocol = '';
    try {
      protocol = new URL(part).protocol;
    } catch {
      protocol = '';
    }
    if (!/^(nats|tls|wss?):$/.test(protocol))
      ctx.addIssue({
        code: 'custom',
        message: 'must be nats://host:port URLs (tls://, ws:// and wss:// too), comma-separated',
      });
  }
});

/** Points of the delivery and publish paths where a test may inject a fault (see src/main/fault-points.ts). */
export const FAULT_POINT_NAMES = [
  'after_claim',
  'after_send',
  'before_record',
  'after_record',
  'before_heartbeat',
  'after_commit_before_response',
] as const;
/** One of {@link FAULT_POINT_NAMES}. */
export type FaultPointName = (typeof FAULT_POINT_NAMES)[number];

/**
 * One armed fault point: at the `hit`-th time `point` is reached (`'every'`: each time), do `action` —
 * `exit` (the process kills itself with SIGKILL) or `stall` for `stallMs`.
 */
export interface FaultPointSpec {
  readonly point: FaultPointName;
  readonly hit: number | 'every';
  readonly action: 'exit' | 'stall';
  readonly stallMs: number;
}

/** `point[@n|@*]:exit` or `point[@n|@*]:stall_ms=N`, comma-separated (test-only setting). */
export const faultPointList = z.string().transform((text, ctx) => {
  const out: FaultPointSpec[] = [];
  for (const part of text
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p !== '')) {
    const match = /^([a-z_]+)(?:@(\d+|\*))?:(exit|stall_ms=(\d+))$/.exec(part);
    const point = FAULT_POINT_NAMES.find((name) => name === match?.[1]);
    if (match === null || point === undefined || match[2] === '0') {
      ctx.addIssue({
        code: 'custom',
        message:
          `"${part}" is not a fault point (point[@n|@*]:exit or point[@n|@*]:stall_ms=N; points: ` +
          `${FAULT_POINT_NAMES.join(', ')})`,
      });
      continue;
    }
    const hit = match[2] === undefined ? 1 : match[2] === '*' ? 'every' : Number(match[2]);
    out.push(
      match[3] === 'exit'
        ? { point, hit, action: 'exit', stallMs: 0 }
        : { point, hit, action: 'stall', stallMs: Number(match[4]) },
    );
  }
  return out;
});

/**
 * One documented setting: its environment variable, the schema that parses and checks its text, its default as it
 * would be written in the environment (undefined: unset), the unit its value is counted in, and the one paragraph
 * of docs/reference/configuration.md that says what it does.
 */
export interface Setting<T extends z.ZodType = z.ZodType> {
  readonly env: string;
  readonly schema: T;
  readonly defaultValue: string | undefined;
  readonly unit: string;
  readonly description: string;
}

/** A table of settings, keyed by their names in the configuration. */
export type SettingTable = Record<string, Setting>;
