/**
 * What bin/test.ts does about RabbitMQ, NATS and Redis once test-setup.ts has decided: asks whether each answers
 * (with the client libraries the code and tests use), starts the system's RabbitMQ service, or a private nats-server
 * (JetStream) or redis-server on a free port of 127.0.0.1 with a temporary folder, stopped at the end of the run or
 * when the set-up exits in any other way.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from '@nats-io/transport-node';
import { Redis } from 'ioredis';
import { Connection } from 'rabbitmq-client';
import { onProcessExit } from './exit-cleanup.ts';
import { NATS_SERVICE, RABBITMQ_SERVICE, REDIS_SERVICE, type TestService } from './services.ts';

/** Longest wait for one answer, ms. */
const PROBE_TIMEOUT_MS = 3_000;
/** Longest wait for a started service to answer, ms (RabbitMQ's first start takes some seconds). */
const START_TIMEOUT_MS = 90_000;

async function rabbitmqAnswers(url: string): Promise<void> {
  const t = PROBE_TIMEOUT_MS;
  const conn = new Connection({ url, connectionTimeout: t, retryLow: t, retryHigh: t, connectionName: 'npm test' });
  try {
    const failed = new Promise<never>((_, reject) => conn.once('error', reject));
    await Promise.race([conn.onConnect(t), failed]);
  } finally {
    await conn.close().catch(() => undefined);
  }
}

async function natsAnswers(url: string): Promise<void> {
  const nc = await connect({ servers: url, timeout: PROBE_TIMEOUT_MS, reconnect: false, name: 'npm test' });
  try {
    if (nc.info?.jetstream !== true) throw new Error('JetStream is not enabled (nats-server -js)');
  } finally {
    await nc.close().catch(() => undefined);
  }
}

async function redisAnswers(url: string): Promise<void> {
  const redis = new Redis(url, {
    lazyConnect: true,
    connectTimeout: PROBE_TIMEOUT_MS,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  let cause: unknown = null;
  redis.on('error', (error) => (cause = error));
  try {
    await redis.connect().catch((error: unknown) => {
      throw cause ?? error;
    });
    await redis.ping();
  } finally {
    redis.disconnect();
  }
}

/** Null when `service` answers at `url`, else why not (one line). */
export async function serviceFailure(service: TestService, url: string): Promise<string | null> {
  const probe = { rabbitmq: rabbitmqAnswers, nats: natsAnswers, redis: redisAnswers }[service.name];
  try {
    await probe(url);
    return null;
  } catch (error) {
    const e = error as { code?: unknown; message?: unknown };
    const text = String(e.message ?? error).split('\n')[0]!;
    return typeof e.code === 'string' && !text.includes(e.code) ? `${e.code}: ${text}` : text;
  }
}

/** Polls until `service` answers at `url`; throws with the last reason after START_TIMEOUT_MS or once `gone()`. */
async function untilAnswers(service: TestService, url: string, gone: () => string | null): Promise<void> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  for (;;) {
    const failure = await serviceFailure(service, url);
    if (failure === null) return;
    const exited = gone();
    if (exited !== null) throw new Error(`${service.program} ${exited}`);
    if (Date.now() > deadline) throw new Error(`${service.title} at ${url} did not answer in time: ${failure}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** The system's RabbitMQ service, started (as root) and waited for at its default URL. */
export async function startRabbitmqService(): Promise<void> {
  const res = spawnSync('service', [RABBITMQ_SERVICE.pkg, 'start'], { stdio: 'inherit' });
  if (res.error !== undefined) spawnSync(`/etc/init.d/${RABBITMQ_SERVICE.pkg}`, ['start'], { stdio: 'inherit' });
  await untilAnswers(RABBITMQ_SERVICE, RABBITMQ_SERVICE.defaultUrl, () => null);
}

/** A server of this run: its URL, and stopping it removes its folder. */
export interface PrivateServer {
  readonly url: string;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function startPrivate(
  service: TestService,
  program: string,
  args: (port: number, dir: string) => string[],
  url: (port: number) => string,
): Promise<PrivateServer> {
  const dir = mkdtempSync(join(tmpdir(), `tidings-test-${service.name}-`));
  const port = await freePort();
  const child: ChildProcess = spawn(program, args(port, dir), { stdio: 'ignore' });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let status: string | null = null;
  child.once('exit', (code, signal) => (status = `exited (${code ?? signal}); its log is in ${dir}`));
  child.once('error', (error) => (status = `did not start: ${error.message}`));
  const unregister = onProcessExit(() => {
    child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });
  const stop = async (): Promise<void> => {
    unregister();
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await untilAnswers(service, url(port), () => status);
  } catch (error) {
    unregister();
    child.kill('SIGKILL');
    throw error;
  }
  return { url: url(port), stop };
}

/** A private nats-server with JetStream, its store in a temporary folder. */
export async function startPrivateNats(program: string): Promise<PrivateServer> {
  const args = (port: number, dir: string): string[] => [
    '-a',
    '127.0.0.1',
    '-p',
    String(port),
    '-js',
    '-sd',
    dir,
    '-l',
    join(dir, 'nats-server.log'),
  ];
  return await startPrivate(NATS_SERVICE, program, args, (port) => `nats://127.0.0.1:${port}`);
}

/** A private redis-server that saves nothing. */
export async function startPrivateRedis(program: string): Promise<PrivateServer> {
  const args = (port: number, dir: string): string[] => [
    ...['--bind', '127.0.0.1', '--port', String(port), '--save', '', '--appendonly', 'no'],
    ...['--dir', dir, '--logfile', join(dir, 'redis-server.log')],
  ];
  return await startPrivate(REDIS_SERVICE, program, args, (port) => `redis://127.0.0.1:${port}`);
}
