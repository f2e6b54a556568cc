/**
 * `tidings doctor` and `tidings config show` on this host, as processes with the environment of a deployment:
 * a healthy installation is all ok (exit 0); a database that is down, a key that is not the one that encrypted the
 * data, an invalid setting are errors (exit 1); pending migrations are a warning; a host clock off from the
 * database's (through the host-clock seam) is an error past 30 s. config show names each value's source and
 * masks secrets.
 */
import assert from 'node:assert/strict';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { checkKeyRegistry } from '../../src/adapters/postgres/key-registry.ts';
import { egressChecks, type Check } from '../../src/cli/doctor.ts';
import type { CliIo } from '../../src/cli/io.ts';
import { runOperatorCommand } from '../../src/cli/program.ts';
import { gatherDoctorFacts } from '../../src/main/doctor-probe.ts';
import { keyFileOf } from '../../src/main/operator.ts';
import { TEST_ENCRYPTION_KEYS, testCipher } from '../support/cipher.ts';
import { freshServerDatabase, type TestDatabase } from '../support/db.ts';
import { NATS_URL, RABBITMQ_URL } from '../support/services.ts';
import { json, runCli } from './cli-harness.ts';

let healthy: TestDatabase;
let empty: TestDatabase;
let closedPort: number;

before(async () => {
  [healthy, empty] = await Promise.all([freshServerDatabase(), freshServerDatabase({ migrate: false })]);
  // As after a first start: the key ring's current key is registered with its canary.
  await checkKeyRegistry(healthy.db, testCipher());
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closedPort = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
});
after(async () => {
  await Promise.all([healthy.drop(), empty.drop()]);
});

const serverEnv = (url: string, keys = TEST_ENCRYPTION_KEYS): Record<string, string> => ({
  DATABASE_URL: url,
  TIDINGS_ENCRYPTION_KEYS: keys,
});
const byCheck = (checks: readonly Check[], name: string): Check[] => checks.filter((c) => c.check === name);

test('doctor: all ok on a healthy installation; each broken one names its error and exits 1', async () => {
  const wrongKey = `test1:${Buffer.alloc(32, 8).toString('base64')}`;
  const [ok, down, wrong, invalid, pending, text] = await Promise.all([
    runCli(['doctor', '--json'], { env: serverEnv(healthy.url!) }),
    runCli(['doctor', '--json'], { env: serverEnv(`postgresql://postgres@127.0.0.1:${closedPort}/none`) }),
    runCli(['doctor', '--json'], { env: serverEnv(healthy.url!, wrongKey) }),
    runCli(['doctor', '--json'], { env: { ...serverEnv(healthy.url!), TIDINGS_LEASE: 'soon' } }),
    runCli(['doctor', '--json'], { env: serverEnv(empty.url!) }),
    runCli(['doctor'], { env: { ...serverEnv(healthy.url!), TIDINGS_EGRESS_ALLOWLIST: '169.254.0.0/16' } }),
  ]);
  const report = (r: typeof ok) => json<{ ok: boolean; checks: Check[] }>(r);

  assert.equal(ok.code, 0, ok.stderr);
  const healthyChecks = report(ok).checks;
  assert.deepEqual(
    healthyChecks.filter((c) => c.level !== 'ok'),
    [],
    'no warning, no error',
  );
  assert.deepEqual(
    [...new Set(healthyChecks.map((c) => c.check))],
    ['configuration', 'egress', 'database', 'clock', 'migrations', 'keys', 'transport'],
  );
  assert.match(byCheck(healthyChecks, 'database')[0]!.message, /^PostgreSQL \d+/);
  assert.match(byCheck(healthyChecks, 'keys')[0]!.message, /current test1; every stored key is in the ring/);
  assert.match(byCheck(healthyChecks, 'transport')[0]!.message, /^PostgreSQL claim: dispatchers claim due deliveries/);

  assert.equal(down.code, 1);
  assert.equal(byCheck(report(down).checks, 'database')[0]!.level, 'error');
  assert.match(byCheck(report(down).checks, 'database')[0]!.message, /^unreachable: .*ECONNREFUSED/);
  assert.match(down.stderr, /tidings doctor: 2 errors/, 'the database and the transport on it');

  assert.equal(wrong.code, 1);
  assert.match(
    byCheck(report(wrong).checks, 'keys')[0]!.message,
    /key test1 has other bytes .*encryption_key_mismatch/,
  );

  assert.equal(invalid.code, 1);
  assert.match(byCheck(report(invalid).checks, 'configuration')[0]!.message, /^TIDINGS_LEASE="soon": /);

  assert.equal(pending.code, 0, 'pending migrations are a warning: processes apply them at start');
  const migrations = byCheck(report(pending).checks, 'migrations')[0]!;
  assert.equal(migrations.level, 'warning');
  assert.match(migrations.message, /^\d+ pending: 1764000000000_baseline, /);
  assert.match(migrations.fix!, /tidings migrate/);

  assert.equal(text.code, 1);
  assert.match(
    text.stdout,
    /^error {4}egress {9}169\.254\.0\.0\/16 opens the cloud metadata service to webhooks\n {24}-> remove it/m,
  );
  assert.match(text.stdout, /^ok {7}database {7}PostgreSQL /m);
});

test('doctor: a broker transport is reached; one that does not answer is an error, credentials hidden', async () => {
  const brokerEnv = (transport: string, url: string): Record<string, string> => ({
    ...serverEnv(healthy.url!),
    TIDINGS_TRANSPORT: transport,
    [transport === 'nats' ? 'TIDINGS_NATS_URL' : 'TIDINGS_RABBITMQ_URL']: url,
  });
  const [rabbit, rabbitDown, nats, natsDown] = await Promise.all([
    runCli(['doctor', '--json'], { env: brokerEnv('rabbitmq', RABBITMQ_URL) }),
    runCli(['doctor', '--json'], { env: brokerEnv('rabbitmq', `amqp://guest:hunter2@127.0.0.1:${closedPort}`) }),
    runCli(['doctor', '--json'], { env: brokerEnv('nats', NATS_URL) }),
    runCli(['doctor', '--json'], { env: brokerEnv('nats', `nats://tidings:hunter2@127.0.0.1:${closedPort}`) }),
  ]);
  const transport = (r: typeof rabbit): Check => {
    const checks = json<{ checks: Check[] }>(r).checks;
    const others = checks.filter((c) => c.level !== 'ok' && c.check !== 'transport');
    assert.deepEqual(others, [], 'only the transport differs');
    return byCheck(checks, 'transport')[0]!;
  };

  assert.equal(rabbit.code, 0, rabbit.stdout);
  assert.equal(transport(rabbit).level, 'ok');
  // The URLs as shown: no credentials (127.0.0.1:5672 and 127.0.0.1:4222 unless TIDINGS_TEST_…_URL says otherwise).
  const rabbitShown = `amqp://${new URL(RABBITMQ_URL).host}`;
  const natsShown = `nats://${new URL(NATS_URL).host}`;
  assert.ok(transport(rabbit).message.startsWith(`RabbitMQ: ${rabbitShown} answered the AMQP 0-9-1 handshake in`));
  assert.equal(nats.code, 0, nats.stdout);
  assert.equal(transport(nats).level, 'ok');
  assert.ok(transport(nats).message.startsWith(`NATS: ${natsShown} answered in `), transport(nats).message);
  assert.match(transport(nats).message, / answered in \d+ ms: server \d+\.\d+\.\d+, JetStream enabled$/);

  for (const [down, kind, scheme, setting] of [
    [rabbitDown, 'RabbitMQ', 'amqp', 'TIDINGS_RABBITMQ_URL'],
    [natsDown, 'NATS', 'nats', 'TIDINGS_NATS_URL'],
  ] as const) {
    assert.equal(down.code, 1, down.stdout);
    assert.match(down.stderr, /tidings doctor: 1 error/);
    const check = transport(down);
    assert.equal(check.level, 'error');
    assert.ok(
      check.message.startsWith(`${kind}: cannot reach the broker at ${scheme}://127.0.0.1:${closedPort}: `),
      check.message,
    );
    assert.match(check.message, /refused/i);
    assert.match(check.fix!, new RegExp(`check ${setting}`));
    assert.doesNotMatch(down.stdout, /hunter2|guest|tidings@/, 'no credentials printed');
  }
});

test('doctor: an IPv6 allow-list entry covering IPv4-mapped addresses is an error, never "has no effect"', () => {
  const entries = ['::ffff:0:0/96', '::ffff:169.254.169.254/128', '::ffff:a9fe:0/112', '::/96', '::a9fe:a9fe/128'];
  for (const check of egressChecks(entries, true)) {
    assert.equal(check.level, 'error', check.message);
    assert.match(check.message, /covers IPv4-mapped IPv6 addresses.*opens none/);
    assert.match(check.fix!, /list its IPv4 address/);
  }
  assert.match(egressChecks(['::ffff:169.254.169.254/128'], false)[0]!.message, /cloud metadata service among them/);
  assert.doesNotMatch(egressChecks(['::ffff:10.0.0.1/128'], false)[0]!.message, /metadata/);
  // Entries next to the mapped ranges keep their own verdicts.
  assert.deepEqual(
    egressChecks(['::1/128', '2606:4700::/48', '64:ff9b::/96'], false).map((c) => c.level),
    ['ok', 'warning', 'ok'],
  );
});

/** Runs `tidings doctor --json` in this process with a host clock `offsetMs` off, through the seam. */
async function doctorWithClock(offsetMs: number): Promise<{ code: number; checks: Check[] }> {
  let stdout = '';
  const io: CliIo = {
    stdout: {
      write: (s: string) => {
        stdout += s;
        return true;
      },
    },
    stderr: { write: () => true },
    stdin: process.stdin,
    env: serverEnv(healthy.url!),
    now: () => Date.now() + offsetMs,
    signal: new AbortController().signal,
  };
  const code = await runOperatorCommand(['doctor', '--json'], io, { gatherDoctorFacts, keyFileOf });
  return { code, checks: (JSON.parse(stdout) as { checks: Check[] }).checks };
}

test('doctor: a host clock 2 minutes ahead of the database is an error, 5 s a warning, in step ok', async () => {
  const [far, near, inStep] = await Promise.all([
    doctorWithClock(120_000),
    doctorWithClock(-5_000),
    doctorWithClock(0),
  ]);
  const clock = (r: { checks: Check[] }): Check => byCheck(r.checks, 'clock')[0]!;
  assert.equal(far.code, 1);
  assert.equal(clock(far).level, 'error');
  assert.match(clock(far).message, /^this host's clock is 1[12]\d{4} ms ahead of the database's$/);
  assert.match(clock(far).fix!, /NTP/);
  assert.deepEqual([near.code, clock(near).level], [0, 'warning']);
  assert.match(clock(near).message, /behind the database's/);
  assert.deepEqual([inStep.code, clock(inStep).level], [0, 'ok']);
});

test("config show names each value's source (env, file, default) and masks secrets", async () => {
  const dir = await mkdtemp(join(tmpdir(), 'tidings-config-'));
  await writeFile(join(dir, '.env'), 'PORT=9999\nTIDINGS_CONCURRENCY=64 # from the file\nTIDINGS_LOG_LEVEL=debug\n');
  const env = {
    DATABASE_URL: 'postgresql://tidings:hunter2@db.internal:5432/tidings',
    TIDINGS_API_TOKEN: 'a-very-secret-admin-token',
    TIDINGS_LOG_LEVEL: 'warn',
  };
  const [shown, changed, invalid] = await Promise.all([
    runCli(['config', 'show', '--env-file', join(dir, '.env'), '--json'], { env }),
    runCli(['config', 'show', '--env-file', join(dir, '.env'), '--changed'], { env }),
    runCli(['config', 'show'], { env: { PORT: 'eighty' } }),
  ]);
  assert.equal(shown.code, 0, shown.stderr);
  const rows = new Map(
    json<{ data: { env: string; value: string | null; source: string; file?: string }[] }>(shown).data.map((r) => [
      r.env,
      r,
    ]),
  );
  assert.deepEqual(rows.get('PORT'), {
    env: 'PORT',
    value: '9999',
    source: 'file',
    file: join(dir, '.env'),
    secret: false,
  });
  assert.equal(rows.get('TIDINGS_CONCURRENCY')?.value, '64');
  assert.deepEqual(
    [rows.get('TIDINGS_LOG_LEVEL')?.value, rows.get('TIDINGS_LOG_LEVEL')?.source],
    ['warn', 'env'],
    'the environment wins over the file',
  );
  assert.deepEqual([rows.get('TIDINGS_API_TOKEN')?.value, rows.get('TIDINGS_API_TOKEN')?.source], ['••••••••', 'env']);
  assert.equal(rows.get('DATABASE_URL')?.value, 'postgresql://tidings:••••••••@db.internal:5432/tidings');
  assert.deepEqual([rows.get('TIDINGS_LEASE')?.value, rows.get('TIDINGS_LEASE')?.source], ['60000', 'default']);
  assert.equal(rows.get('TIDINGS_METRICS_TOKEN')?.source, 'unset');
  assert.doesNotMatch(shown.stdout + changed.stdout, /hunter2|a-very-secret/);
  assert.deepEqual(
    changed.stdout
      .trimEnd()
      .split('\n')
      .slice(1)
      .map((l) => l.split(/ +/)[0])
      .sort(),
    ['DATABASE_URL', 'PORT', 'TIDINGS_API_TOKEN', 'TIDINGS_CONCURRENCY', 'TIDINGS_LOG_LEVEL'],
  );
  assert.equal(invalid.code, 2);
  assert.match(invalid.stderr, /PORT="eighty"/);
});

test('doctor: a broker URL it cannot read is one problem naming it, the transport named and not checked', async () => {
  for (const [transport, name, kind, url] of [
    ['nats', 'TIDINGS_NATS_URL', 'NATS', '127.0.0.1:4222'],
    ['rabbitmq', 'TIDINGS_RABBITMQ_URL', 'RabbitMQ', 'http://127.0.0.1:5672'],
  ] as const) {
    const facts = await gatherDoctorFacts({ TIDINGS_TRANSPORT: transport, [name]: url }, () => Date.now());
    assert.equal(facts.config.ok, false);
    const problems = facts.config.ok ? [] : facts.config.problems;
    assert.equal(problems.length, 1, problems.join('\n'));
    assert.ok(problems[0]!.startsWith(`${name}="${url}`), problems[0]);
    assert.equal(facts.transport.kind, kind);
    assert.match(facts.transport.detail, /not checked/);
  }
});
