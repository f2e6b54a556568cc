/**
 * Receiver authentication end to end (docs/adr/0028-receiver-authentication.md): the API of Tidings on the
 * PostgreSQL server, each endpoint's auth set through `PUT …/endpoint/{ep}/auth`; a dispatcher on a manual clock,
 * stepped by the test, its sender with receiver auth; real servers on 127.0.0.1: a receiver that demands basic
 * credentials, an OAuth2 token server (client-credentials grant) with expiring tokens and a receiver that checks
 * them, and a receiver over TLS that demands a client certificate from its own CA. At the end, no secret or token is
 * in the database in plain text (pg_dump) or in the logs.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { after, before, describe, test } from 'node:test';
import { Svix } from 'svix';
import { createHttpSender } from '../../src/adapters/http-sender/http-sender.ts';
import { createPgDeliveryStore } from '../../src/adapters/postgres/delivery/delivery-store.ts';
import { createPgReceiverAuthStore } from '../../src/adapters/postgres/endpoint/endpoint-auth-store.ts';
import { createDispatcher, type Dispatcher } from '../../src/app/dispatcher/dispatcher.ts';
import { createReceiverAuthLookup, withReceiverAuth } from '../../src/app/receiver-auth-lookup.ts';
import { startTidings, type Running } from '../../src/main/compose.ts';
import { createLogger } from '../../src/observability/logger.ts';
import type { Sender } from '../../src/ports/sender.ts';
import { TEST_ENCRYPTION_KEYS, testCipher } from '../support/cipher.ts';
import { freshServerDatabase, type TestDatabase } from '../support/db.ts';
import { LogTap } from '../support/log-tap.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { seededRandom } from '../support/random.ts';
import { makeTestCertificates, type TestCertificates } from '../support/test-certificates.ts';

const TOKEN = `e2e_${randomBytes(16).toString('hex')}`;
const SECOND = 1000;
const RETRY_DELAY_MS = 60 * SECOND;
const BASIC = { username: 'hooks', password: `pw-${randomBytes(12).toString('hex')}` };
const CLIENT = { id: 'tidings-client', secret: `cs-${randomBytes(12).toString('hex')}` };
const TOKEN_LIFETIME_S = 60;

/** What a test receiver saw of one request. */
interface Seen {
  readonly path: string;
  readonly authorization: string | undefined;
  readonly clientCert: string | null;
}

/** A small server on 127.0.0.1 that answers each request with `answer` and remembers it. */
interface TestServer {
  readonly server: Server;
  readonly port: number;
  readonly seen: Seen[];
  url(path: string): string;
  stop(): Promise<void>;
}

async function listen(server: Server, scheme: 'http' | 'https', port = 0): Promise<TestServer> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const seen: Seen[] = [];
  server.on('request', (req: IncomingMessage) => {
    const socket = req.socket as TLSSocket;
    const peer = typeof socket.getPeerCertificate === 'function' ? socket.getPeerCertificate() : null;
    const cn = peer?.subject?.CN;
    seen.push({
      path: req.url ?? '',
      authorization: req.headers.authorization,
      clientCert: typeof cn === 'string' ? cn : null,
    });
  });
  const bound = (server.address() as AddressInfo).port;
  return {
    server,
    port: bound,
    seen,
    url: (path) => `${scheme}://127.0.0.1:${bound}${path}`,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Drains the request body, then answers. */
function answer(req: IncomingMessage, res: ServerResponse, status: number, body = ''): void {
  req.resume();
  req.on('end', () => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(body);
  });
}

/** The OAuth2 token server: client-credentials grant, HTTP basic client auth, tokens `tok-1`, `tok-2`, … */
class TokenServer {
  readonly accepted: Set<string>;
  /** @param accepted where each token issued is added: the receiver accepts it. */
  constructor(accepted: Set<string>) {
    this.accepted = accepted;
  }
  issued: string[] = [];
  grants: URLSearchParams[] = [];
  handler = (req: IncomingMessage, res: ServerResponse): void => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
      const expected = `Basic ${Buffer.from(`${CLIENT.id}:${CLIENT.secret}`).toString('base64')}`;
      if (req.headers.authorization !== expected || form.get('grant_type') !== 'client_credentials') {
        res.writeHead(401, { 'content-type': 'application/json' });
        res.end('{"error":"invalid_client"}');
        return;
      }
      this.grants.push(form);
      const token = `tok-${this.issued.length + 1}-${randomBytes(8).toString('hex')}`;
      this.issued.push(token);
      this.accepted.add(token);
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' });
      res.end(JSON.stringify({ access_token: token, token_type: 'Bearer', expires_in: TOKEN_LIFETIME_S }));
    });
  };
}

describe('receiver authentication (PostgreSQL server, manual clock, real receivers on 127.0.0.1)', () => {
  const clock = new ManualClock();
  const logs = new LogTap();
  let certs: TestCertificates;
  let database: TestDatabase;
  let tidings: Running;
  let sender: Sender;
  let dispatcher: Dispatcher;
  let svix: Svix;
  let basicReceiver: TestServer;
  let bearerReceiver: TestServer;
  let tlsReceiver: TestServer;
  let tokenServer: TestServer;
  /** Tokens the bearer receiver accepts; a token refused once is removed by the test. */
  const accepted = new Set<string>();
  const tokens = new TokenServer(accepted);

  before(async () => {
    certs = makeTestCertificates();
    database = await freshServerDatabase();
    basicReceiver = await listen(
      createHttpServer((req, res) => {
        const ok =
          req.headers.authorization ===
          `Basic ${Buffer.from(`${BASIC.username}:${BASIC.password}`).toString('base64')}`;
        answer(req, res, ok ? 204 : 401);
      }),
      'http',
    );
    bearerReceiver = await listen(
      createHttpServer((req, res) => {
        const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
        answer(req, res, token !== undefined && accepted.has(token) ? 204 : 401);
      }),
      'http',
    );
    tokenServer = await listen(createHttpServer(tokens.handler), 'http');
    tlsReceiver = await listen(
      createHttpsServer(
        {
          key: certs.server.key,
          cert: certs.server.cert,
          ca: certs.ca.cert,
          requestCert: true,
          rejectUnauthorized: true,
        },
        (req, res) => answer(req, res, 204),
      ),
      'https',
    );
    tidings = await startTidings({
      roles: { api: true, dispatcher: false },
      clock,
      logDestination: logs,
      env: {
        DATABASE_URL: database.url!,
        TIDINGS_ENCRYPTION_KEYS: TEST_ENCRYPTION_KEYS,
        TIDINGS_API_TOKEN: TOKEN,
        HOST: '127.0.0.1',
        PORT: '0',
        TIDINGS_LOG_LEVEL: 'debug',
        TIDINGS_EGRESS_ALLOWLIST: '127.0.0.1/32',
        TIDINGS_RETRY_SCHEDULE: `${RETRY_DELAY_MS}ms`,
      },
    });
    svix = new Svix(TOKEN, { serverUrl: tidings.apiUrl! });
    const logger = createLogger({ level: 'debug', destination: logs });
    const http = createHttpSender({
      connectTimeoutMs: 2000,
      headersTimeoutMs: 5000,
      bodyTimeoutMs: 5000,
      deadlineMs: 5000,
      maxResponseBytes: 65536,
      responsePrefixBytes: 1024,
      maxSocketsPerOrigin: 16,
      egressAllowlist: ['127.0.0.1/32'],
      userAgent: 'test',
      receiverAuth: { cacheMax: 100, tokenEarlyRefreshMs: 30 * SECOND, tokenDefaultLifetimeMs: 300 * SECOND },
      nowMs: () => clock.nowMs(),
    });
    const lookup = createReceiverAuthLookup(createPgReceiverAuthStore(tidings.db, testCipher()), {
      refreshMs: 0,
      max: 100,
      clock,
    });
    sender = withReceiverAuth(http, lookup, (endpointId, error) => logger.warn({ err: error, endpointId }, 'auth'));
    dispatcher = createDispatcher({
      store: createPgDeliveryStore(tidings.db, testCipher()),
      sender,
      clock,
      random: seededRandom(7),
      logger,
      settings: {
        dispatcherId: 'manual',
        concurrency: 16,
        claimBatch: 16,
        leaseMs: 30_000,
        attemptDeadlineMs: 5000,
        maxReclaims: 5,
        pollIntervalMs: 50,
        shutdownGraceMs: 0,
        endpointWindowShare: 1,
        windowReserve: 0,
        retryPolicy: { delaysMs: [RETRY_DELAY_MS], jitter: 0, retryAfterMinMs: 1000, retryAfterMaxMs: RETRY_DELAY_MS },
      },
    });
  });
  after(async () => {
    await dispatcher?.stop();
    await sender?.close();
    await tidings?.stop();
    for (const s of [basicReceiver, bearerReceiver, tlsReceiver, tokenServer]) await s?.stop();
    await database?.drop();
  });

  const api = async (method: string, path: string, body?: unknown): Promise<Response> =>
    fetch(`${tidings.apiUrl}/api/v1${path}`, {
      method,
      headers: {
        authorization: `Bearer ${TOKEN}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  const setAuth = async (appId: string, endpointId: string, auth: object): Promise<Record<string, unknown>> => {
    const res = await api('PUT', `/app/${appId}/endpoint/${endpointId}/auth`, auth);
    const text = await res.text();
    assert.equal(res.status, 200, text);
    return JSON.parse(text) as Record<string, unknown>;
  };
  /** One step of the dispatcher at the clock's instant: claims what is due, waits until every attempt is recorded. */
  const step = async (): Promise<number> => {
    const claimed = await dispatcher.tick();
    await dispatcher.drained();
    return claimed;
  };
  const attempts = async (
    endpointId: string,
  ): Promise<{ status: number | null; kind: string | null; detail: string | null }[]> =>
    (
      await tidings.db.query<{ status: number | null; kind: string | null; detail: string | null }>(
        `SELECT a.response_status_code AS status, a.error_kind AS kind, a.error_detail AS detail
         FROM attempts a JOIN deliveries d ON d.id = a.delivery_id WHERE d.endpoint_id = $1
         ORDER BY a.created_at, a.id`,
        [endpointId],
      )
    ).rows;
  const states = async (endpointId: string): Promise<string[]> =>
    (
      await tidings.db.query<{ state: string }>('SELECT state FROM deliveries WHERE endpoint_id = $1 ORDER BY id', [
        endpointId,
      ])
    ).rows.map((r) => r.state);
  const publish = async (appId: string, n = 1): Promise<void> => {
    for (let i = 0; i < n; i += 1) await svix.message.create(appId, { eventType: 'order.paid', payload: { i } });
  };

  test('basic credentials: refused without them, delivered with them; the API shows the password masked', async () => {
    const app = await svix.application.create({ name: 'basic' });
    const ep = await svix.endpoint.create(app.id, { url: basicReceiver.url('/basic') });
    await publish(app.id);
    assert.equal(await step(), 1);
    assert.deepEqual(
      (await attempts(ep.id)).map((a) => a.status),
      [401],
    );
    const shown = await setAuth(app.id, ep.id, { basic: BASIC });
    assert.deepEqual(shown['basic'], { username: BASIC.username, password: `••••${BASIC.password.slice(-2)}` });
    clock.advance(RETRY_DELAY_MS);
    assert.equal(await step(), 1);
    assert.deepEqual(
      (await attempts(ep.id)).map((a) => a.status),
      [401, 204],
    );
    assert.equal(basicReceiver.seen.at(-1)?.authorization?.startsWith('Basic '), true);
  });

  test('OAuth2: one token for concurrent attempts, renewed shortly before it expires and on a 401', async () => {
    const app = await svix.application.create({ name: 'oauth2' });
    const ep = await svix.endpoint.create(app.id, { url: bearerReceiver.url('/bearer') });
    const shown = await setAuth(app.id, ep.id, {
      oauth2: {
        tokenUrl: tokenServer.url('/token'),
        clientId: CLIENT.id,
        clientSecret: CLIENT.secret,
        scope: 'webhooks:write',
        audience: 'https://receiver.example',
      },
    });
    assert.equal((shown['oauth2'] as { clientSecret: string }).clientSecret, `••••${CLIENT.secret.slice(-2)}`);

    // Four concurrent attempts wait for one token request (single-flight).
    await publish(app.id, 4);
    assert.equal(await step(), 4);
    assert.equal(tokens.issued.length, 1, 'one token request for four attempts');
    assert.equal(tokens.grants[0]?.get('scope'), 'webhooks:write');
    assert.equal(tokens.grants[0]?.get('audience'), 'https://receiver.example');
    assert.deepEqual(await states(ep.id), ['succeeded', 'succeeded', 'succeeded', 'succeeded']);

    // 29 s later (60 s lifetime, renewed 30 s before it ends): the same token.
    clock.advance(29 * SECOND);
    await publish(app.id);
    await step();
    assert.equal(tokens.issued.length, 1, 'the cached token is used until 30 s before it expires');
    // Past the renewal instant: a new token.
    clock.advance(2 * SECOND);
    await publish(app.id);
    await step();
    assert.equal(tokens.issued.length, 2, 'renewed 30 s before its expiry');
    assert.equal(bearerReceiver.seen.at(-1)?.authorization, `Bearer ${tokens.issued[1]}`);

    // The receiver revokes the current token: one 401, one fresh token, the same attempt delivered.
    accepted.delete(tokens.issued[1]!);
    const before = bearerReceiver.seen.length;
    await publish(app.id);
    await step();
    assert.equal(tokens.issued.length, 3, 'one refresh after the 401');
    assert.equal(bearerReceiver.seen.length - before, 2, 'the request made twice: refused, then with the new token');
    assert.deepEqual(
      (await attempts(ep.id)).map((a) => a.status),
      [204, 204, 204, 204, 204, 204, 204],
    );
  });

  test('OAuth2 token server down: the attempt fails as receiver_auth, nothing sent, retried on schedule', async () => {
    const app = await svix.application.create({ name: 'token down' });
    const ep = await svix.endpoint.create(app.id, { url: bearerReceiver.url('/down') });
    const port = tokenServer.port;
    await setAuth(app.id, ep.id, {
      oauth2: { tokenUrl: tokenServer.url('/token'), clientId: CLIENT.id, clientSecret: CLIENT.secret },
    });
    await tokenServer.stop();
    const seenBefore = bearerReceiver.seen.length;
    await publish(app.id);
    const t = clock.nowMs();
    assert.equal(await step(), 1);
    const [failed] = await attempts(ep.id);
    assert.equal(failed?.kind, 'receiver_auth');
    assert.match(failed?.detail ?? '', /token endpoint failed \(connect_refused\)/);
    assert.equal(bearerReceiver.seen.length, seenBefore, 'nothing reached the receiver');
    const due = await tidings.db.query<{ at: Date }>(
      'SELECT next_attempt_at AS at FROM deliveries WHERE endpoint_id = $1',
      [ep.id],
    );
    assert.equal(due.rows[0]!.at.getTime() - t, RETRY_DELAY_MS, 'retried on the schedule');

    tokenServer = await listen(createHttpServer(tokens.handler), 'http', port);
    clock.advance(RETRY_DELAY_MS);
    assert.equal(await step(), 1);
    assert.deepEqual(
      (await attempts(ep.id)).map((a) => [a.kind, a.status]),
      [
        ['receiver_auth', null],
        [null, 204],
      ],
    );
  });

  test('mTLS: refused without a client certificate or with a wrong one; a new one gets new connections', async () => {
    const app = await svix.application.create({ name: 'mtls' });
    const ep = await svix.endpoint.create(app.id, { url: tlsReceiver.url('/tls') });
    const right = { certificate: certs.client.cert, key: certs.client.key, ca: certs.ca.cert };
    // Only the CA (the receiver's certificate is trusted), no client certificate: the receiver refuses.
    await setAuth(app.id, ep.id, { mtls: { ca: certs.ca.cert } });
    await publish(app.id);
    await step();
    const shown = await setAuth(app.id, ep.id, { mtls: right });
    assert.equal((shown['mtls'] as { certificate: { subject: string } }).certificate.subject, 'CN=sender');
    clock.advance(RETRY_DELAY_MS);
    await step();
    // Delivered with the right one (its connection kept alive), then a wrong certificate: a new connection, refused.
    await setAuth(app.id, ep.id, {
      mtls: { certificate: certs.wrongClient.cert, key: certs.wrongClient.key, ca: certs.ca.cert },
    });
    await publish(app.id);
    await step();
    const rows = await attempts(ep.id);
    assert.equal(rows.length, 3);
    assert.notEqual(rows[0]?.status, 204, `without a client certificate: ${rows[0]?.kind} ${rows[0]?.detail}`);
    assert.equal(rows[1]?.status, 204);
    assert.notEqual(rows[2]?.status, 204, `with a wrong client certificate: ${rows[2]?.kind} ${rows[2]?.detail}`);
    assert.deepEqual(
      tlsReceiver.seen.map((s) => s.clientCert),
      ['sender'],
      'only the right certificate reached the receiver',
    );
  });

  test('a receiver that echoes Authorization: the credentials are redacted from the recorded response', async () => {
    // Echoes the header, the bearer token and the decoded basic credentials in its body and its Location.
    const echo = await listen(
      createHttpServer((req, res) => {
        const authorization = req.headers.authorization ?? '';
        const [scheme, value = ''] = authorization.split(' ');
        const decoded = scheme === 'Basic' ? Buffer.from(value, 'base64').toString('utf8') : value;
        req.resume();
        req.on('end', () => {
          res.writeHead(302, { location: `https://elsewhere.example/?seen=${value}`, 'content-type': 'text/plain' });
          res.end(`you sent ${authorization} (${value}) = ${decoded}`);
        });
      }),
      'http',
    );
    try {
      const app = await svix.application.create({ name: 'echo' });
      const basicEp = await svix.endpoint.create(app.id, { url: echo.url('/basic') });
      const bearerEp = await svix.endpoint.create(app.id, { url: echo.url('/bearer') });
      await setAuth(app.id, basicEp.id, { basic: BASIC });
      await setAuth(app.id, bearerEp.id, {
        oauth2: { tokenUrl: tokenServer.url('/token'), clientId: CLIENT.id, clientSecret: CLIENT.secret },
      });
      await publish(app.id);
      assert.equal(await step(), 2);
      const userPass = `${BASIC.username}:${BASIC.password}`;
      const sentToken = echo.seen.find((x) => x.path === '/bearer')!.authorization!.slice('Bearer '.length);
      for (const ep of [basicEp, bearerEp]) {
        const res = await fetch(`${tidings.apiUrl}/api/v1/app/${app.id}/attempt/endpoint/${ep.id}?with_content=true`, {
          headers: { authorization: `Bearer ${TOKEN}` },
        });
        const text = await res.text();
        assert.equal(res.status, 200, text);
        assert.match(text, /you sent/, 'the response body is recorded');
        assert.match(text, /••••/, 'with the credentials replaced');
        for (const secret of [BASIC.password, Buffer.from(userPass).toString('base64'), sentToken])
          assert.equal(text.includes(secret), false, `${ep.id}: a secret in the attempt: ${secret.slice(0, 6)}…`);
      }
      const stored = await tidings.db.query<{ location: string | null }>(
        `SELECT a.response_location AS location FROM attempts a JOIN deliveries d ON d.id = a.delivery_id
         WHERE d.endpoint_id = ANY($1)`,
        [[basicEp.id, bearerEp.id]],
      );
      assert.deepEqual(
        stored.rows.map((r) => r.location),
        ['https://elsewhere.example/?seen=••••', 'https://elsewhere.example/?seen=••••'],
        'the echoed Location redacted too',
      );
    } finally {
      await echo.stop();
    }
  });

  test('no secret, key or token in the database in plain text (pg_dump) nor in the logs', () => {
    const dump = execFileSync('pg_dump', ['--data-only', '--no-owner', database.url!], {
      maxBuffer: 256 * 1024 * 1024,
    }).toString('utf8');
    const keyBody = (pem: string): string => pem.split('\n')[2]!;
    const secrets = [
      BASIC.password,
      CLIENT.secret,
      keyBody(certs.client.key),
      keyBody(certs.wrongClient.key),
      ...tokens.issued,
    ];
    assert.ok(tokens.issued.length >= 4);
    for (const secret of secrets) {
      const hex = Buffer.from(secret, 'utf8').toString('hex');
      assert.equal(dump.includes(secret) || dump.includes(hex), false, `a secret in the dump: ${secret.slice(0, 6)}…`);
      assert.equal(logs.text().includes(secret), false, `a secret in the logs: ${secret.slice(0, 6)}…`);
    }
    assert.ok(dump.includes(BASIC.username), 'the dump is readable (the user name is not a secret)');
  });
});
