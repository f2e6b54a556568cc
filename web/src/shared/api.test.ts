import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { ApiError, client, ok, payloadBytes, query, token } from './api.ts';

test('query: defined, non-empty values; arrays repeat their key; nothing gives no question mark', () => {
  assert.equal(query({ limit: '25', iterator: null, status: '', tag: undefined }), '?limit=25');
  assert.equal(
    query({ event_types: ['a.b', 'c d'], with_content: false }),
    '?event_types=a.b&event_types=c+d&with_content=false',
  );
  assert.equal(query({}), '');
});

test('payloadBytes: the payload exactly as the API sent it, key order and number text kept', () => {
  const text = '{"id":"msg_1","eventType":"x","payload":{"b":1.50,"a":[1e3]}}';
  assert.equal(payloadBytes(text), '{"b":1.50,"a":[1e3]}');
  assert.equal(payloadBytes('{"id":"msg_1"}'), '');
});

const answer = (status: number, body: string | null, contentType = 'application/json') =>
  new Response(body, { status, headers: body === null ? {} : { 'content-type': contentType } });

test('ok: the data of a 2xx; an ApiError with the code and detail of a refusal, its text when not JSON', async () => {
  assert.deepEqual(await ok(Promise.resolve({ data: { id: 'a' }, response: answer(200, '{}') })), { id: 'a' });
  const refused = ok(
    Promise.resolve({ error: { code: 'not_found', detail: 'No such endpoint' }, response: answer(404, '{}') }),
  );
  await assert.rejects(refused, (e: unknown) => {
    assert.ok(e instanceof ApiError);
    assert.deepEqual([e.status, e.code, e.detail], [404, 'not_found', 'No such endpoint']);
    return true;
  });
  const invalid = {
    code: 'validation',
    detail: [
      { loc: ['body', 'url'], msg: 'Invalid URL' },
      { loc: ['body', 'uid'], msg: 'Too long' },
    ],
  };
  await assert.rejects(ok(Promise.resolve({ error: invalid, response: answer(422, '{}') })), {
    code: 'validation',
    detail: 'body.url: Invalid URL; body.uid: Too long',
  });
  await assert.rejects(ok(Promise.resolve({ error: `<html>${'x'.repeat(400)}`, response: answer(502, 'x') })), {
    status: 502,
    code: 'http_502',
    detail: `<html>${'x'.repeat(294)}`,
  });
});

test('ok: no answer at all is a network_error ApiError naming the cause', async () => {
  await assert.rejects(ok(Promise.reject(new TypeError('fetch failed'))), {
    status: 0,
    code: 'network_error',
    detail: 'Tidings did not answer (fetch failed)',
  });
});

test('client: the in-memory token as a Bearer header, none without it; paths filled in and encoded', async () => {
  const seen: { url: string; headers: IncomingHttpHeaders }[] = [];
  const server = createServer((req, res) => {
    seen.push({ url: req.url ?? '', headers: req.headers });
    if (req.headers.authorization === undefined) {
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end('{"code":"authentication_failed","detail":"No token"}');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"id":"app_1","name":"a"}');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    token.value = 'tok_secret';
    const app = await ok(client.GET('/api/v1/app/{appId}', { baseUrl, params: { path: { appId: 'a/b c' } } }));
    assert.equal(app.id, 'app_1');
    assert.equal(seen[0]?.url, '/api/v1/app/a%2Fb%20c');
    assert.equal(seen[0]?.headers.authorization, 'Bearer tok_secret');
    token.value = null;
    await assert.rejects(ok(client.GET('/api/v1/auth/me', { baseUrl })), {
      status: 401,
      code: 'authentication_failed',
    });
    assert.equal(seen[1]?.headers.authorization, undefined);
  } finally {
    token.value = null;
    await new Promise((r) => server.close(r));
  }
});
