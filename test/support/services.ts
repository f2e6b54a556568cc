/**
 * Where the tests find the services beside PostgreSQL: RabbitMQ, NATS with JetStream and Redis. Each has a default
 * on 127.0.0.1 and a `TIDINGS_TEST_…_URL` to point elsewhere; `npm test` (bin/test.ts) sets all three to what it
 * found or started, and every test reads them here.
 */

/** A service the suites need, where they look for it by default, and what brings it on Debian. */
export interface TestService {
  readonly name: 'rabbitmq' | 'nats' | 'redis';
  /** As printed: `RabbitMQ`, `NATS JetStream`, `Redis`. */
  readonly title: string;
  /** The variable that points the tests elsewhere. */
  readonly env: string;
  readonly defaultUrl: string;
  /** The Debian package, and the program of it that the set-up looks for. */
  readonly pkg: string;
  readonly program: string;
}

export const RABBITMQ_SERVICE: TestService = {
  name: 'rabbitmq',
  title: 'RabbitMQ',
  env: 'TIDINGS_TEST_RABBITMQ_URL',
  defaultUrl: 'amqp://guest:guest@127.0.0.1:5672',
  pkg: 'rabbitmq-server',
  program: 'rabbitmq-server',
};

export const NATS_SERVICE: TestService = {
  name: 'nats',
  title: 'NATS JetStream',
  env: 'TIDINGS_TEST_NATS_URL',
  defaultUrl: 'nats://127.0.0.1:4222',
  pkg: 'nats-server',
  program: 'nats-server',
};

export const REDIS_SERVICE: TestService = {
  name: 'redis',
  title: 'Redis',
  env: 'TIDINGS_TEST_REDIS_URL',
  defaultUrl: 'redis://127.0.0.1:6379',
  pkg: 'redis-server',
  program: 'redis-server',
};

export const TEST_SERVICES: readonly TestService[] = [RABBITMQ_SERVICE, NATS_SERVICE, REDIS_SERVICE];

/** The URL the tests use for `service`: its variable when set and not empty, else the default. */
export function serviceUrl(service: TestService, env: NodeJS.ProcessEnv = process.env): string {
  const given = env[service.env];
  return given !== undefined && given !== '' ? given : service.defaultUrl;
}

export const RABBITMQ_URL = serviceUrl(RABBITMQ_SERVICE);
export const NATS_URL = serviceUrl(NATS_SERVICE);
export const REDIS_URL = serviceUrl(REDIS_SERVICE);
