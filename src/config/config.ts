import type { z } from 'zod';
import { LEASE_MARGIN_MS, leaseCoversAttempt } from '../domain/retry-policy.ts';
import type { Setting } from './parse.ts';
import { DATABASE_SETTINGS } from './settings/database.ts';
import { API_SETTINGS } from './settings/api.ts';
import { REQUEST_SETTINGS } from './settings/requests.ts';
import { PORTAL_SETTINGS } from './settings/portal.ts';
import { DELIVERY_SETTINGS } from './settings/delivery.ts';
import { DISPATCHER_SETTINGS } from './settings/dispatcher.ts';
import { BROKER_SETTINGS } from './settings/broker.ts';
import { JOB_SETTINGS } from './settings/jobs.ts';
import { OBSERVABILITY_SETTINGS } from './settings/observability.ts';

/*
 * The one configuration schema: every setting is one entry (environment name, parser, default, unit, what it does)
 * in a table of src/config/settings/, one file per concern; docs/reference/configuration.md is generated from the
 * tables (`npm run docs`) and a test keeps the two in step. The only code that reads the environment (main/ passes
 * `process.env` in).
 */

export { FAULT_POINT_NAMES, parseDurationMs, type FaultPointName, type FaultPointSpec } from './parse.ts';

/** The tables of settings in the order of docs/reference/configuration.md, each with its heading there. */
export const SETTING_GROUPS = [
  { title: 'Database and storage', settings: DATABASE_SETTINGS },
  { title: 'HTTP API: serving and limits', settings: API_SETTINGS },
  { title: 'HTTP API: what a request may carry', settings: REQUEST_SETTINGS },
  { title: 'Application portal and browsers', settings: PORTAL_SETTINGS },
  { title: 'Sending a delivery', settings: DELIVERY_SETTINGS },
  { title: 'Dispatcher', settings: DISPATCHER_SETTINGS },
  { title: 'Broker transports', settings: BROKER_SETTINGS },
  { title: 'Background jobs', settings: JOB_SETTINGS },
  { title: 'Logs, metrics and traces', settings: OBSERVABILITY_SETTINGS },
] as const;

/** Every setting, keyed by its name in {@link Config}. */
export const SETTINGS = {
  ...DATABASE_SETTINGS,
  ...API_SETTINGS,
  ...REQUEST_SETTINGS,
  ...PORTAL_SETTINGS,
  ...DELIVERY_SETTINGS,
  ...DISPATCHER_SETTINGS,
  ...BROKER_SETTINGS,
  ...JOB_SETTINGS,
  ...OBSERVABILITY_SETTINGS,
};

type Settings = typeof SETTINGS;
/** The validated configuration. Durations end in Ms (milliseconds). */
export type Config = { readonly [K in keyof Settings]: z.output<Settings[K]['schema']> };

/** Variables that were renamed: [old, new]. Setting an old one is a configuration error naming the new one. */
export const RENAMED_VARIABLES: readonly (readonly [string, string])[] = [
  ['TIDINGS_WORKER_ID', 'TIDINGS_DISPATCHER_ID'],
];

/** Thrown by {@link loadConfig}; `problems` lists every invalid setting at once. */
export class ConfigError extends Error {
  readonly problems: readonly string[];
  constructor(problems: readonly string[]) {
    super(`invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

/**
 * Reads and validates every setting from `env`, then checks the settings against each other.
 * @throws ConfigError listing every problem (fail fast at start-up).
 */
/**
 * A refused URL setting's value as its problem shows it: each URL of a comma-separated list without its user,
 * password and query (which may carry secrets); a part that is not a URL as given unless it holds an `@` (then hidden).
 */
function shownUrl(raw: string): string {
  const parts = raw.split(',').map((part) => {
    const text = part.trim();
    try {
      const url = new URL(text);
      url.username = '';
      url.password = '';
      url.search = '';
      const shown = url.toString();
      return shown.includes('@') ? '(value hidden)' : shown;
    } catch {
      return text.includes('@') ? '(value hidden)' : text;
    }
  });
  return JSON.stringify(parts.join(','));
}

export function loadConfig(env: Readonly<Record<string, string | undefined>>): Config {
  const problems: string[] = [];
  const out: Record<string, unknown> = {};
  for (const [key, s] of Object.entries(SETTINGS) as [keyof Settings, Setting][]) {
    // An empty variable means "unset": its default applies (never Number('') = 0).
    const given = env[s.env];
    const raw = given === undefined || given === '' ? s.defaultValue : given;
    const parsed = s.schema.safeParse(raw);
    if (parsed.success) out[key] = parsed.data;
    else {
      // Secrets and URLs (which may carry a password) are never echoed back.
      const shown =
        s.unit === 'secret' ? '(value hidden)' : s.unit === 'URL' ? shownUrl(String(raw)) : JSON.stringify(raw);
      problems.push(`${s.env}=${shown}: ${parsed.error.issues.map((i) => i.message).join('; ')}`);
    }
  }
  // A renamed variable is refused, not ignored: the value would otherwise be lost without a word.
  for (const [from, to] of RENAMED_VARIABLES)
    if (env[from] !== undefined && env[from] !== '') problems.push(`${from} was renamed ${to}`);
  // Cross-setting checks run on whatever parsed, so every problem is listed at once.
  const parsed = out as Partial<Config>;
  problems.push(...crossSettingProblems(parsed, env));
  if (parsed.claimBatch !== undefined && parsed.concurrency !== undefined && parsed.claimBatch > parsed.concurrency)
    out.claimBatch = parsed.concurrency;

  if (problems.length > 0) throw new ConfigError(problems);
  return Object.freeze(out) as Config;
}

/** The problems of settings that parsed but do not fit together (see {@link loadConfig}). */
function crossSettingProblems(c: Partial<Config>, env: Readonly<Record<string, string | undefined>>): string[] {
  const problems: string[] = [];
  // A lease shorter than one attempt would let a second dispatcher take a delivery whose request is still
  // in flight on every attempt (docs/guides/failure-table.md, scenario 9): refuse it.
  // The same rule holds a retry policy's attemptTimeout (src/domain/retry-policy.ts).
  if (
    c.leaseMs !== undefined &&
    c.attemptDeadlineMs !== undefined &&
    !leaseCoversAttempt(c.leaseMs, c.attemptDeadlineMs)
  )
    problems.push(
      `TIDINGS_LEASE (${c.leaseMs} ms) must exceed TIDINGS_ATTEMPT_DEADLINE (${c.attemptDeadlineMs} ms) plus ` +
        `${LEASE_MARGIN_MS} ms`,
    );
  if (
    c.retryPolicyMinDelayMs !== undefined &&
    c.retryPolicyMaxDelayMs !== undefined &&
    c.retryPolicyMinDelayMs > c.retryPolicyMaxDelayMs
  )
    problems.push('TIDINGS_RETRY_POLICY_MIN_DELAY must not exceed TIDINGS_RETRY_POLICY_MAX_DELAY');
  if (c.retryAfterMinMs !== undefined && c.retryAfterMaxMs !== undefined && c.retryAfterMinMs > c.retryAfterMaxMs)
    problems.push('TIDINGS_RETRY_AFTER_MIN must not exceed TIDINGS_RETRY_AFTER_MAX');
  if (
    c.responsePrefixBytes !== undefined &&
    c.maxResponseBytes !== undefined &&
    c.responsePrefixBytes > c.maxResponseBytes
  )
    problems.push('TIDINGS_RESPONSE_PREFIX_BYTES must not exceed TIDINGS_MAX_RESPONSE_BYTES');
  if (
    c.apiHeadersTimeoutMs !== undefined &&
    c.apiRequestTimeoutMs !== undefined &&
    c.apiHeadersTimeoutMs > c.apiRequestTimeoutMs
  )
    problems.push('TIDINGS_API_HEADERS_TIMEOUT must not exceed TIDINGS_API_REQUEST_TIMEOUT');
  if ((env[SETTINGS.databaseUrl.env] ?? '') === '') {
    const serverOnly = [
      ['TIDINGS_DIRECT_DATABASE_URL', c.directDatabaseUrl],
      ['TIDINGS_READ_DATABASE_URL', c.readDatabaseUrl],
    ] as const;
    for (const [name, value] of serverOnly)
      if (value !== undefined)
        problems.push(`${name} needs DATABASE_URL (the embedded engine is one session in this process)`);
    if (c.databasePooler !== undefined && c.databasePooler !== 'none')
      problems.push('TIDINGS_DATABASE_POOLER needs DATABASE_URL (the embedded engine has no pooler)');
  }
  if (c.readLagCheckMs !== undefined && c.readMaxLagMs !== undefined && c.readLagCheckMs >= c.readMaxLagMs)
    problems.push('TIDINGS_READ_LAG_CHECK must be less than TIDINGS_READ_MAX_LAG');
  // A URL given and refused has its own problem above: "needs" only when none is given.
  const unset = (name: string): boolean => (env[name] ?? '') === '';
  if (c.transport === 'rabbitmq' && unset('TIDINGS_RABBITMQ_URL'))
    problems.push('TIDINGS_TRANSPORT=rabbitmq needs TIDINGS_RABBITMQ_URL');
  if (c.transport === 'nats' && unset('TIDINGS_NATS_URL'))
    problems.push('TIDINGS_TRANSPORT=nats needs TIDINGS_NATS_URL');
  if (
    c.brokerSweepAfterMs !== undefined &&
    c.brokerPublishIntervalMs !== undefined &&
    c.brokerSweepAfterMs <= c.brokerPublishIntervalMs
  )
    problems.push('TIDINGS_BROKER_SWEEP_AFTER must exceed TIDINGS_BROKER_PUBLISH_INTERVAL');
  if (
    c.brokerReconnectMinMs !== undefined &&
    c.brokerReconnectMaxMs !== undefined &&
    c.brokerReconnectMinMs > c.brokerReconnectMaxMs
  )
    problems.push('TIDINGS_BROKER_RECONNECT_MIN must not exceed TIDINGS_BROKER_RECONNECT_MAX');
  return problems;
}

/**
 * The default of one setting, parsed by its schema: for code that is built without a configuration at hand
 * (a test, a library caller) and must not keep a copy of the default.
 * @throws Error when the setting has no default (it is unset unless configured)
 */
export function settingDefault<K extends keyof Settings>(key: K): Config[K] {
  const s: Setting = SETTINGS[key];
  if (s.defaultValue === undefined) throw new Error(`${s.env} has no default`);
  return s.schema.parse(s.defaultValue) as Config[K];
}

/** A setting's default as the configuration reference shows it. */
function shownDefault(s: Setting): string {
  if (s.defaultValue === undefined) return '(unset)';
  return s.defaultValue === '' ? '(empty)' : `\`${s.defaultValue}\``;
}

/** The configuration reference (docs/reference/configuration.md): a heading and a table per group of settings. */
export function configurationMarkdown(): string {
  const sections = SETTING_GROUPS.map(({ title, settings }) => {
    const rows = Object.values(settings).map(
      (s: Setting) => `| \`${s.env}\` | ${shownDefault(s)} | ${s.unit} | ${s.description} |`,
    );
    return [`## ${title}`, '', '| Variable | Default | Unit | Meaning |', '| --- | --- | --- | --- |', ...rows].join(
      '\n',
    );
  });
  return sections.join('\n\n') + '\n';
}
