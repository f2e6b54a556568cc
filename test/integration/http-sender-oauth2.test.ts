/**
 * The OAuth2 token request of the sender (docs/adr/0028-receiver-authentication.md) is held to what a delivery is
 * held to: the SSRF guard, the attempt deadline, the response cap, no redirects. Each failure is an attempt of error
 * kind `receiver_auth`, nothing reaches the receiver, and the detail carries neither secret nor token. Servers on
 * 127.0.0.1 only.
 */
import assert from 'node:assert/strict';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { createHttpSender, type HttpSenderOptions } from '../../src/adapters/http-sender/http-sender.ts';
import type { SendResult } from '../../src/domain/attempt-outcome.ts';
import type { OAuth2ClientCredentials } from '../../src/domain/receiver-auth.ts';
import type { Sender } from '../../src/ports/sender.ts';

const OPTIONS: HttpSenderOptions = {
  connectTimeoutMs: 1000,
  headersTimeoutMs: 1000,
  bodyTimeoutMs: 1000,
  deadlineMs: 1500,
  maxResponseBytes: 4096,
  responsePrefixBytes: 1024,
  maxSocketsPerOrigin: 8,
  egressAllowlist: ['127.0.0.1/32'],
  userAgent: 'Tidings/test',
};
const SECRET = 'client-secret-never-shown';
const TOKEN = 'token-never-shown';

/** Token server paths: each answers one way. */
const ROUTES: Readonly<Record<string, (res: ServerResponse) => void>> = {
  '/ok': (res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ access_token: TOKEN, token_type: 'Bearer', expires_in: 60 }));
  },
  '/huge': (res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ access_token: TOKEN, padding: 'x'.repeat(100_000) }));
  },
  '/redirect': (res) => {
    res.writeHead(302, { location: '/ok' });
    res.end();
  },
  '/silent': () => {
    // never answers: the attempt deadline ends it
  },
  '/refused': (res) => {
    res.writeHead(401, { 'content-type': 'application/json' });
    res.end(`{"error":"invalid_client","error_description":"${SECRET}"}`);
  },
  '/no-token': (res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"token_type":"Bearer"}');
  },
};

let tokenServer: Server;
let receiver: Server;
let received = 0;
const senders: Sender[] = [];

const listen = async (server: Server): Promise<string> => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
};
let tokenBase = '';
let receiverUrl = '';

before(async () => {
  tokenServer = createServer((req, res) => {
    req.resume();
    ROUTES[req.url ?? '']?.(res);
  });
  receiver = createServer((req, res) => {
    received += 1;
    req.resume();
    res.writeHead(204);
    res.end();
  });
  tokenBase = await listen(tokenServer);
  receiverUrl = `${await listen(receiver)}/hook`;
});

after(async () => {
  await Promise.all(senders.map((s) => s.close()));
  tokenServer.closeAllConnections();
  receiver.closeAllConnections();
  await new Promise((r) => tokenServer.close(r));
  await new Promise((r) => receiver.close(r));
});

async function attempt(path: string, extra: Partial<HttpSenderOptions> = {}): Promise<SendResult> {
  const sender = createHttpSender({ ...OPTIONS, ...extra });
  senders.push(sender);
  const grant: OAuth2ClientCredentials = {
    tokenUrl: `${tokenBase}${path}`,
    clientId: 'client',
    clientSecret: SECRET,
    scope: null,
    audience: null,
  };
  return sender.send({
    url: receiverUrl,
    headers: {},
    body: Buffer.from('{}'),
    poolKey: `ep-${path}`,
    receiverAuth: { version: '1', auth: { oauth2: grant } },
  });
}

const failure = (result: SendResult): [string, string] =>
  result.type === 'error' ? [result.errorKind, result.detail] : ['response', String(result.statusCode)];

test('a working token endpoint: the receiver gets the request with the token', async () => {
  const before = received;
  assert.deepEqual(failure(await attempt('/ok')), ['response', '204']);
  assert.equal(received, before + 1);
});

for (const [path, extra, pattern] of [
  ['/huge', {}, /^token response over TIDINGS_MAX_RESPONSE_BYTES \(4096 bytes\)$/],
  ['/redirect', {}, /^token endpoint answered 302$/],
  ['/silent', { headersTimeoutMs: 5000 }, /^token endpoint: no answer within the attempt deadline of 1500 ms$/],
  ['/refused', {}, /^token endpoint answered 401 \(invalid_client\)$/],
  ['/no-token', {}, /^token response has no usable access_token$/],
  ['/ok', { egressAllowlist: [] }, /^token endpoint failed \(blocked_address\): refused address$/],
] as const) {
  const what = `${path}${'egressAllowlist' in extra ? ', loopback refused' : ''}`;
  test(`a token endpoint that fails (${what}): a receiver_auth attempt, nothing sent`, async () => {
    const before = received;
    const [kind, detail] = failure(await attempt(path, extra));
    assert.equal(kind, 'receiver_auth', detail);
    assert.match(detail, pattern);
    assert.equal(received, before, 'nothing reached the receiver');
    assert.ok(!detail.includes(SECRET) && !detail.includes(TOKEN), 'no secret or token in the detail');
  });
}
