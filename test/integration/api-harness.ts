import { randomBytes } from 'node:crypto';
import { generateToken, hashToken } from '../../src/app/credentials.ts';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { Svix } from 'svix';
import { createPgApiKeyStore } from '../../src/adapters/postgres/credentials/api-key-store.ts';
import { createPgDeliveryStore } from '../../src/adapters/postgres/delivery/delivery-store.ts';
import { loadConfig, type Config } from '../../src/config/config.ts';
import { createHttpDeps } from '../../src/main/http-deps.ts';
import { cryptoRandom, systemClock } from '../../src/adapters/system/system-clock.ts';
import { buildApp } from '../../src/http/app.ts';
import type { HttpDeps } from '../../src/http/deps.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { createMetrics } from '../../src/observability/metrics.ts';
import type { ApiKeyStore } from '../../src/ports/api-key-store.ts';
import type { Cipher } from '../../src/ports/cipher.ts';
import type { Clock } from '../../src/ports/clock.ts';
import type { DeliveryStore } from '../../src/ports/delivery-store.ts';
import { testCipher } from '../support/cipher.ts';
import type { TestDatabase } from '../support/db.ts';

/** The admin token of every API test server. */
export const ADMIN_TOKEN = 'tidings_test_admin_token_0123456789';

/** Body limit of the test servers (small, so 413 is cheap to provoke). */
export const TEST_MAX_BODY_BYTES = 64 * 1024;

/** One running API on 127.0.0.1:0 over a fresh database, with the official client pointed at it. */
export interface ApiHarness {
  readonly database: TestDatabase;
  readonly url: string;
  readonly svix: Svix;
  /** The API-key store of the test database (to seed keys and call the credential use cases directly). */
  readonly keys: ApiKeyStore;
  readonly deliveries: DeliveryStore;
  readonly cipher: Cipher;
  readonly config: Config;
  /** The dependencies the API was built with (e.g. to step the replay task runner by hand). */
  readonly deps: HttpDeps;
  /** The Fastify instance (its connection figures: `app.connectionStats()`). */
  readonly app: FastifyInstance;
  /** Raw request with the admin token (or `token`), JSON body text as given. */
  request(
    method: string,
    path: string,
    options?: { body?: string | Buffer; headers?: Record<string, string>; token?: string | null },
  ): Promise<Response>;
  /** Creates an API key scoped to `appId` and returns its token. */
  appKey(appId: string): Promise<string>;
  close(): Promise<void>;
}

/**
 * Starts the API over a fresh database of `engine` (server or embedded); `options.clock` steers its time
 * (default the system clock). `options.database` runs it over that database instead, beside the API that
 * made it (a second API process: its own dependencies and caches); its `close` then leaves the database.
 */
export async function startApi(
  fresh: () => Promise<TestDatabase>,
  env: Record<string, string> = {},
  options: { readonly clock?: Clock; readonly database?: TestDatabase } = {},
): Promise<ApiHarness> {
  const database = options.database ?? (await fresh());
  const { db } = database;
  const config = loadConfig({
    TIDINGS_API_TOKEN: ADMIN_TOKEN,
    TIDINGS_EGRESS_ALLOWLIST: '127.0.0.1/32,::1/128',
    TIDINGS_LOG_LEVEL: 'silent',
    TIDINGS_MAX_BODY_BYTES: String(TEST_MAX_BODY_BYTES),
    TIDINGS_IDEMPOTENCY_WAIT: '20s',
    ...env,
  });
  const cipher = testCipher();
  const keys = createPgApiKeyStore(db);
  const deliveries = createPgDeliveryStore(db, cipher);
  const deps: HttpDeps = createHttpDeps({
    config,
    db,
    cipher,
    clock: options.clock ?? systemClock,
    random: cryptoRandom,
    logger: createLogger({ level: config.logLevel }),
    metrics: createMetrics({ defaultMetrics: false }),
    ready: async () => {
      await db.query('SELECT 1');
      return true;
    },
    wake: () => undefined,
  });
  const app = buildApp(deps);
  await app.listen({ host: '127.0.0.1', port: 0 });
  const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  return {
    database,
    url,
    keys,
    deliveries,
    cipher,
    config,
    deps,
    app,
    svix: new Svix(ADMIN_TOKEN, { serverUrl: url }),
    request: (method, path, options = {}) =>
      fetch(url + path, {
        method,
        headers: {
          ...(options.token === null ? {} : { authorization: `Bearer ${options.token ?? ADMIN_TOKEN}` }),
          ...(options.body === undefined ? {} : { 'content-type': 'application/json' }),
          ...options.headers,
        },
        ...(options.body === undefined ? {} : { body: options.body }),
      }),
    async appKey(appId) {
      const token = generateToken();
      await keys.insertApiKeyIfAbsent(
        {
          id: `key_${randomBytes(8).toString('hex')}`,
          name: 'scoped',
          role: 'app',
          appId,
          tokenHash: hashToken(token),
          tokenPrefix: token.slice(0, 12),
        },
        null,
      );
      return token;
    },
    async close() {
      await app.close();
      if (options.database === undefined) await database.drop();
    },
  };
}

/** Reads a JSON error body and returns it with the status. */
export async function errorOf(response: Response): Promise<{ status: number; code: string; detail: unknown }> {
  const body = (await response.json()) as { code: string; detail: unknown };
  return { status: response.status, code: body.code, detail: body.detail };
}
