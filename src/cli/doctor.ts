import { Command } from 'commander';
import ipaddr from 'ipaddr.js';
import type { Config } from '../config/config.ts';
import { REFUSED_RANGES } from '../domain/egress-policy.ts';
import { CliError, ExitCode, printJson, printLine, type CliIo } from './io.ts';
import { loadEnvFile } from './env-file.ts';

/**
 * `tidings doctor`: what is wrong with this installation, checked from the host it runs on (with the
 * configuration and DATABASE_URL of the processes, like `tidings migrate`). The facts are gathered by
 * src/main/doctor-probe.ts (it may open the database); here they are judged, each check one line —
 * ok, warning or error — with what to do. Doctor changes nothing.
 */

/** Clock skew between this host and the database up to which all is well, ms. */
export const SKEW_OK_MS = 1_000;
/**
 * Skew from which doctor reports an error, ms: webhook-timestamp is taken from the dispatcher host's clock,
 * and receivers refuse a timestamp more than 5 minutes off; leases and due times use the database's clock.
 */
export const SKEW_ERROR_MS = 30_000;
/** The oldest PostgreSQL server Tidings runs on (README). */
export const MIN_POSTGRES_VERSION_NUM = 150_000;
/** Allow-list entries shorter than these prefixes open a large part of the address space. */
const BROAD_PREFIX = { ipv4: 8, ipv6: 32 } as const;
/** Cloud metadata services: an allow-list that opens them lets a webhook read the host's credentials. */
const METADATA_ADDRESSES = ['169.254.169.254', 'fd00:ec2::254'];
/** IPv4-mapped and IPv4-compatible IPv6: the egress guard judges them by the IPv4 inside, never by an IPv6 entry. */
const IPV4_IN_IPV6 = ['::ffff:0:0/96', '::/96'].map((cidr) => ipaddr.parseCIDR(cidr));
const UNSPECIFIED_AND_LOOPBACK = ipaddr.parseCIDR('::/127');

/**
 * An error when an IPv6 entry covers IPv4-mapped or -compatible addresses: it looks as if it opened the IPv4
 * inside (`::ffff:169.254.169.254/128`, `::ffff:0:0/96`) but opens nothing there; null otherwise.
 */
function mappedEntryCheck(cidr: string, network: ipaddr.IPv4 | ipaddr.IPv6, bits: number): Check | null {
  if (network.kind() !== 'ipv6') return null;
  const covers = IPV4_IN_IPV6.some(([range, rangeBits]) => {
    if (bits <= rangeBits) return range.match([network, bits]);
    // Within ::/96, :: and ::1 are the unspecified and loopback addresses, not IPv4-compatible ones.
    return network.match([range, rangeBits]) && !(bits >= 127 && network.match(UNSPECIFIED_AND_LOOPBACK));
  });
  if (!covers) return null;
  const metadata = METADATA_ADDRESSES.filter((a) => ipaddr.parse(a).kind() === 'ipv4').some((a) =>
    ['::ffff:', '::'].some((prefix) => ipaddr.parse(prefix + a).match([network, bits])),
  );
  const target = metadata ? ', the cloud metadata service among them' : '';
  return {
    check: 'egress',
    level: 'error',
    message: `${cidr} covers IPv4-mapped IPv6 addresses${target}: they are judged by the IPv4 inside, so it opens none`,
    fix: 'remove it; to open an IPv4 receiver, list its IPv4 address (a.b.c.d/32)',
  };
}

/** One check's verdict. */
export interface Check {
  readonly check: string;
  readonly level: 'ok' | 'warning' | 'error';
  readonly message: string;
  /** What to do (warnings and errors). */
  readonly fix?: string;
}

/** What src/main/doctor-probe.ts found. A part that could not be read holds its `error`. */
export interface DoctorFacts {
  readonly config:
    { readonly ok: true; readonly config: Config } | { readonly ok: false; readonly problems: readonly string[] };
  readonly database:
    | null
    | { readonly error: string }
    | {
        readonly engine: 'server' | 'embedded';
        readonly version: string;
        readonly versionNum: number;
        readonly skewMs: number;
        readonly roundTripMs: number;
      };
  readonly migrations: null | { readonly error: string } | { readonly pending: readonly string[] };
  readonly keys:
    | null
    | { readonly source: 'none' }
    | { readonly source: 'plaintext' }
    | { readonly source: 'generated' }
    | RingFacts;
  /** The transport: on success `detail`; on failure `error`, and `fix` (else `detail`) says what to do. */
  readonly transport: {
    readonly kind: string;
    readonly detail: string;
    readonly error?: string;
    readonly fix?: string;
  };
}

/** A key ring from the environment or the data folder's key file: its ids (first = current), or why it is invalid. */
export interface RingFacts {
  readonly source: 'env' | 'file';
  readonly ring: readonly string[];
  readonly error?: string | undefined;
  readonly registry?: KeyRegistryFacts | { readonly error: string };
}

/** The key registry against the ring (see src/adapters/postgres/key-registry.ts). */
export interface KeyRegistryFacts {
  readonly registered: readonly { readonly id: string; readonly retired: boolean }[];
  readonly mismatched: readonly string[];
  readonly missing: readonly string[];
}

/** The allow-list's entries judged: what each opens. */
export function egressChecks(allowlist: readonly string[], production: boolean): Check[] {
  if (allowlist.length === 0)
    return [
      {
        check: 'egress',
        level: 'ok',
        message: 'TIDINGS_EGRESS_ALLOWLIST is empty: webhooks reach public addresses only',
      },
    ];
  return allowlist.map((cidr): Check => {
    const [network, bits] = ipaddr.parseCIDR(cidr);
    const kind = network.kind();
    if (METADATA_ADDRESSES.some((a) => ipaddr.parse(a).kind() === kind && ipaddr.parse(a).match([network, bits]))) {
      return {
        check: 'egress',
        level: 'error',
        message: `${cidr} opens the cloud metadata service to webhooks`,
        fix: 'remove it, or narrow it to the addresses your receivers use',
      };
    }
    if (bits < BROAD_PREFIX[kind]) {
      return {
        check: 'egress',
        level: 'error',
        message: `${cidr} opens a /${bits}: a large part of the address space`,
        fix: "list the receivers' addresses or small ranges instead",
      };
    }
    const mapped = mappedEntryCheck(cidr, network, bits);
    if (mapped !== null) return mapped;
    const opened = REFUSED_RANGES.filter((r) => {
      const [rn, rb] = ipaddr.parseCIDR(r.cidr);
      return rn.kind() === kind && (network.match([rn, rb]) || rn.match([network, bits]));
    });
    if (opened.length === 0)
      return {
        check: 'egress',
        level: 'warning',
        message: `${cidr} has no effect: public addresses are allowed already`,
        fix: 'remove it',
      };
    const names = [...new Set(opened.map((r) => r.name))].join(', ');
    const loopback = opened.every((r) => r.name === 'loopback');
    if (loopback && production) {
      return {
        check: 'egress',
        level: 'warning',
        message: `${cidr} opens loopback (this host's own services) with a PostgreSQL server configured`,
        fix: 'loopback is for local development: remove it in production',
      };
    }
    return { check: 'egress', level: 'ok', message: `${cidr} opens ${names} (operator's choice)` };
  });
}

/** The configuration's verdict, and the settings that should not be set in production. */
function configChecks(f: DoctorFacts): Check[] {
  if (!f.config.ok) {
    return f.config.problems.map((p) => ({
      check: 'configuration',
      level: 'error',
      message: p,
      fix: 'see docs/reference/configuration.md',
    }));
  }
  const c = f.config.config;
  const out: Check[] = [
    {
      check: 'configuration',
      level: 'ok',
      message: `valid (${c.databaseUrl === undefined ? 'embedded engine in ' + c.dataDir : 'PostgreSQL server'})`,
    },
  ];
  if (c.testFaultPoints.length > 0)
    out.push({
      check: 'configuration',
      level: 'error',
      message: 'TIDINGS_TEST_FAULT_POINTS is set: processes will crash or stall on purpose',
      fix: 'unset it (test only)',
    });
  return [...out, ...egressChecks(c.egressAllowlist, c.databaseUrl !== undefined)];
}

/** Database reachability, version and clock. */
function databaseChecks(f: DoctorFacts): Check[] {
  const d = f.database;
  if (d === null)
    return [
      {
        check: 'database',
        level: 'warning',
        message: 'not checked: the configuration is invalid',
        fix: 'fix the configuration first',
      },
    ];
  if ('error' in d)
    return [
      {
        check: 'database',
        level: 'error',
        message: `unreachable: ${d.error}`,
        fix: 'check DATABASE_URL, that PostgreSQL runs, and that it accepts this host and user',
      },
    ];
  const out: Check[] = [
    d.versionNum >= MIN_POSTGRES_VERSION_NUM
      ? {
          check: 'database',
          level: 'ok',
          message:
            `${d.engine === 'server' ? 'PostgreSQL' : 'embedded PostgreSQL (PGlite)'} ${d.version}, ` +
            `answered in ${d.roundTripMs} ms`,
        }
      : {
          check: 'database',
          level: 'error',
          message: `PostgreSQL ${d.version} is older than 15`,
          fix: 'upgrade the server to PostgreSQL 15 or later',
        },
  ];
  const skew = Math.abs(d.skewMs);
  const side = d.skewMs > 0 ? 'ahead of' : 'behind';
  const what = `this host's clock is ${skew} ms ${side} the database's`;
  const fix =
    'synchronise the clocks (NTP, chrony): webhook-timestamp comes from the dispatcher host, ' +
    'receivers refuse one more than 5 min off';
  if (d.engine === 'embedded')
    out.push({ check: 'clock', level: 'ok', message: "the embedded database runs on this host's clock" });
  else if (skew <= SKEW_OK_MS) out.push({ check: 'clock', level: 'ok', message: what });
  else out.push({ check: 'clock', level: skew >= SKEW_ERROR_MS ? 'error' : 'warning', message: what, fix });
  return out;
}

/** Pending migrations. */
function migrationChecks(f: DoctorFacts): Check[] {
  const m = f.migrations;
  if (m === null) return [];
  if ('error' in m)
    return [
      {
        check: 'migrations',
        level: 'error',
        message: `cannot read the migration history: ${m.error}`,
        fix: "check the database user's rights",
      },
    ];
  if (m.pending.length === 0) return [{ check: 'migrations', level: 'ok', message: 'the database is up to date' }];
  return [
    {
      check: 'migrations',
      level: 'warning',
      message: `${m.pending.length} pending: ${m.pending.join(', ')}`,
      fix: 'run `tidings migrate` (processes also apply them when they start, under a lock)',
    },
  ];
}

/** The key ring: configured, valid, and able to read what is stored. */
function keyChecks(f: DoctorFacts): Check[] {
  const k = f.keys;
  if (k === null) return [];
  if (k.source === 'none')
    return [
      {
        check: 'keys',
        level: 'error',
        message: 'no TIDINGS_ENCRYPTION_KEYS with a PostgreSQL server: start-up refuses',
        fix: 'set a key ring (`tidings keys generate`)',
      },
    ];
  if (k.source === 'plaintext')
    return [
      {
        check: 'keys',
        level: 'warning',
        message: 'TIDINGS_INSECURE_PLAINTEXT_STORAGE=true: secrets and payloads are stored unencrypted',
        fix: 'set TIDINGS_ENCRYPTION_KEYS (development only otherwise)',
      },
    ];
  if (k.source === 'generated')
    return [
      {
        check: 'keys',
        level: 'ok',
        message: 'the embedded engine generates its key into the data folder at first start',
      },
    ];
  if (k.error !== undefined)
    return [
      {
        check: 'keys',
        level: 'error',
        message: k.error,
        fix: 'each entry is id:base64 of 32 bytes (`tidings keys generate`)',
      },
    ];
  const from = k.source === 'file' ? "the data folder's key file" : 'TIDINGS_ENCRYPTION_KEYS';
  const r = k.registry;
  if (r === undefined)
    return [{ check: 'keys', level: 'ok', message: `${k.ring.length} key(s) from ${from}; the registry was not read` }];
  if ('error' in r)
    return [
      {
        check: 'keys',
        level: 'error',
        message: `cannot read the key registry: ${r.error}`,
        fix: "check the database user's rights",
      },
    ];
  const out: Check[] = [];
  if (r.mismatched.length > 0)
    out.push({
      check: 'keys',
      level: 'error',
      message:
        `key ${r.mismatched.join(', ')} has other bytes than the key that encrypted the stored data: ` +
        'start-up refuses (encryption_key_mismatch)',
      fix: 'restore the original key',
    });
  if (r.missing.length > 0)
    out.push({
      check: 'keys',
      level: 'error',
      message:
        `stored data is encrypted under ${r.missing.join(', ')}, missing from the ring: ` +
        'start-up refuses (encryption_key_missing)',
      fix: 'add the key back (it may leave the ring once `tidings keys rotate` retired it)',
    });
  if (out.length > 0) return out;
  const retired = r.registered.filter((x) => x.retired && k.ring.includes(x.id) && x.id !== k.ring[0]).map((x) => x.id);
  const registered = r.registered.some((x) => x.id === k.ring[0]);
  return [
    {
      check: 'keys',
      level: 'ok',
      message:
        `${k.ring.length} key(s) from ${from}, current ${k.ring[0]}` +
        (registered ? '' : ' (registered at the next start)') +
        '; every stored key is in the ring' +
        (retired.length > 0 ? `; ${retired.join(', ')} retired: may leave the ring` : ''),
    },
  ];
}

/** Every check, in the order they are printed. */
export function doctorChecks(f: DoctorFacts): Check[] {
  const t = f.transport;
  const transport: Check =
    t.error === undefined
      ? { check: 'transport', level: 'ok', message: `${t.kind}: ${t.detail}` }
      : { check: 'transport', level: 'error', message: `${t.kind}: ${t.error}`, fix: t.fix ?? t.detail };
  return [...configChecks(f), ...databaseChecks(f), ...migrationChecks(f), ...keyChecks(f), transport];
}

/** The checks as aligned lines, each fix on the line below. */
export function checkLines(checks: readonly Check[]): string[] {
  return checks.flatMap((c) => [
    `${c.level.padEnd(7)}  ${c.check.padEnd(13)}  ${c.message}`,
    ...(c.fix === undefined ? [] : [`${' '.repeat(24)}-> ${c.fix}`]),
  ]);
}

/** Gathers the facts with this environment (src/main/doctor-probe.ts). */
export type GatherFacts = (
  env: Readonly<Record<string, string | undefined>>,
  hostNow: () => number,
) => Promise<DoctorFacts>;

/** `tidings doctor`. Exit code 1 when any check is an error. */
export function doctorCommand(io: CliIo, gather: GatherFacts): Command {
  return new Command('doctor')
    .description('check this installation: configuration, database, migrations, clock, egress, keys, transport')
    .option('--env-file <path>', 'read settings from this file too (the environment wins)')
    .option('--json', 'print the checks as JSON')
    .action(async (o: { envFile?: string; json?: boolean }) => {
      const env = await loadEnvFile(io.env, o.envFile);
      const checks = doctorChecks(await gather(env.values, io.now));
      const errors = checks.filter((c) => c.level === 'error').length;
      if (o.json === true) printJson(io, { ok: errors === 0, checks });
      else for (const line of checkLines(checks)) printLine(io, line);
      if (errors > 0) throw new CliError(ExitCode.failure, `${errors} error${errors === 1 ? '' : 's'}`);
    });
}
