import { randomBytes } from 'node:crypto';
import { Svix } from 'svix';
import { encodeSecret } from '../../src/domain/signing.ts';
import { startTidings, type Running } from '../../src/main/compose.ts';
import { TEST_ENCRYPTION_KEYS } from './cipher.ts';
import { freshServerDatabase, type TestDatabase } from './db.ts';
import { LogTap } from './log-tap.ts';
import { startTestReceiver, type TestReceiver } from './test-receiver.ts';

/**
 * One end-to-end world: a fresh database on the PostgreSQL server, Tidings (API + dispatcher) in this
 * process on 127.0.0.1:0 with its logs captured, a receiver process on 127.0.0.1 that verifies every request,
 * and the official svix client pointed at Tidings.
 */
export interface InProcessWorld {
  readonly database: TestDatabase;
  readonly tidings: Running;
  readonly receiver: TestReceiver;
  readonly svix: Svix;
  readonly logs: LogTap;
  readonly token: string;
  /** Creates an endpoint on `path` of the receiver with a fresh secret the receiver verifies with; returns its id. */
  endpoint(appId: string, path: string): Promise<string>;
  /** A raw API call with the admin token; `body` is sent as JSON. */
  api(method: string, path: string, body?: unknown): Promise<Response>;
  stop(): Promise<void>;
}

/**
 * Starts an {@link InProcessWorld}. `env` adds to (and overrides) the defaults: the test key ring, an admin
 * token, loopback allowed for egress, a 50 ms poll, info logs.
 */
export async function startInProcessWorld(env: Readonly<Record<string, string>> = {}): Promise<InProcessWorld> {
  const token = `e2e_${randomBytes(16).toString('hex')}`;
  const database = await freshServerDatabase();
  const receiver = await startTestReceiver();
  const logs = new LogTap();
  let tidings: Running;
  try {
    tidings = await startTidings({
      roles: { api: true, dispatcher: true },
      logDestination: logs,
      env: {
        DATABASE_URL: database.url!,
        TIDINGS_ENCRYPTION_KEYS: TEST_ENCRYPTION_KEYS,
        TIDINGS_API_TOKEN: token,
        HOST: '127.0.0.1',
        PORT: '0',
        TIDINGS_EGRESS_ALLOWLIST: '127.0.0.1/32',
        TIDINGS_POLL_INTERVAL: '50ms',
        TIDINGS_LOG_LEVEL: 'info',
        ...env,
      },
    });
  } catch (error) {
    await receiver.stop();
    await database.drop();
    throw error;
  }
  const svix = new Svix(token, { serverUrl: tidings.apiUrl! });
  return {
    database,
    tidings,
    receiver,
    svix,
    logs,
    token,
    async endpoint(appId, path) {
      const secret = encodeSecret(randomBytes(32));
      await receiver.setSecret(path, secret);
      return (await svix.endpoint.create(appId, { url: receiver.url(path), secret })).id;
    },
    api: (method, path, body) =>
      fetch(`${tidings.apiUrl}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      }),
    async stop() {
      await tidings.stop();
      await receiver.stop();
      await database.drop();
    },
  };
}
