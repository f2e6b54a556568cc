/**
 * The HTTP edge over raw sockets to 127.0.0.1 (PostgreSQL server): requests that never reach a route are
 * answered in the error contract (`{code, detail}` JSON) without echoing the request; requests whose meaning
 * would be a guess are refused; an unauthenticated caller's body is never read, and `100 Continue` is sent
 * only after authentication; slow requests time out with 408.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { freshServerDatabase } from '../support/db.ts';
import { rawExchange } from '../support/raw-http.ts';
import { ADMIN_TOKEN, startApi, type ApiHarness } from './api-harness.ts';

const AUTH = `Authorization: Bearer ${ADMIN_TOKEN}\r\n`;

describe('the HTTP edge answers in the error contract', () => {
  let api: ApiHarness;
  before(async () => {
    api = await startApi(freshServerDatabase, {
      TIDINGS_API_HEADERS_TIMEOUT: '600ms',
      TIDINGS_API_REQUEST_TIMEOUT: '3s',
      TIDINGS_API_BODY_RATE_GRACE: '300ms',
      TIDINGS_API_MIN_BODY_RATE: '1024',
    });
  });
  after(async () => api?.close());

  const exchange = (text: string, timeoutMs?: number) =>
    rawExchange(api.url, text, timeoutMs === undefined ? {} : { timeoutMs });
  const appCount = async () =>
    Number((await api.database.db.query<{ n: string }>('SELECT count(*) AS n FROM applications')).rows[0]?.n);

  test(
    'a malformed percent-encoding in the path (FST_ERR_BAD_URL) is 400 bad_request JSON that does not echo the ' +
      'URL',
    async () => {
      const r = await exchange(
        `GET /api/v1/app/%zz-secret-looking HTTP/1.1\r\nHost: t\r\nConnection: close\r\n${AUTH}\r\n`,
      );
      assert.equal(r.status, 400);
      assert.deepEqual(Object.keys(r.body as object), ['code', 'detail']);
      assert.equal((r.body as { code: string }).code, 'bad_request');
      assert.doesNotMatch(r.text, /secret-looking|FST_ERR/);
    },
  );

  test('a path segment over the router limit is 414 uri_too_long JSON that does not echo the URL', async () => {
    const r = await exchange(
      `GET /api/v1/app/${'s'.repeat(3000)} HTTP/1.1\r\nHost: t\r\nConnection: close\r\n${AUTH}\r\n`,
    );
    assert.equal(r.status, 414);
    assert.equal((r.body as { code: string }).code, 'uri_too_long');
    assert.doesNotMatch(r.text, /sssss/);
  });

  test('headers over the size limit are 431 headers_too_large JSON, and the connection is closed', async () => {
    const r = await exchange(`GET /api/v1/app HTTP/1.1\r\nHost: t\r\nX-Pad: ${'p'.repeat(20_000)}\r\n${AUTH}\r\n`);
    assert.equal(r.status, 431);
    assert.equal((r.body as { code: string }).code, 'headers_too_large');
    assert.notEqual(r.closedAfterMs, null);
  });

  test("a request Node cannot parse gets {code, detail} JSON, not Node's or Fastify's own body", async () => {
    const r = await exchange('NOT-HTTP at all\r\n\r\n');
    assert.equal(r.status, 400);
    assert.equal((r.body as { code: string }).code, 'bad_request');
    assert.doesNotMatch(r.text, /"statusCode"|Client Error/);
  });

  test('an HTTP/1.1 request without Host is 400 bad_request with a JSON body, not an empty 400', async () => {
    const r = await exchange(`GET /api/v1/app HTTP/1.1\r\n${AUTH}\r\n`);
    assert.equal(r.status, 400);
    assert.equal((r.body as { code: string }).code, 'bad_request');
    assert.match((r.body as { detail: string }).detail, /Host/);
  });

  test(
    'two Authorization, Idempotency-Key or Content-Type headers are refused 400 ambiguous_request and create ' +
      'nothing',
    async () => {
      const before = await appCount();
      const body = '{"name":"twice"}';
      const head = `POST /api/v1/app HTTP/1.1\r\nHost: t\r\nContent-Length: ${body.length}\r\n`;
      for (const extra of [
        `${AUTH}Authorization: Bearer someone-else\r\nContent-Type: application/json\r\n`,
        `${AUTH}Content-Type: application/json\r\nIdempotency-Key: a\r\nIdempotency-Key: b\r\n`,
        `${AUTH}Content-Type: application/json\r\nContent-Type: text/plain\r\n`,
      ]) {
        const r = await exchange(`${head}${extra}\r\n${body}`);
        assert.equal(r.status, 400, extra);
        assert.equal((r.body as { code: string }).code, 'ambiguous_request', extra);
      }
      assert.equal(await appCount(), before);
    },
  );

  test(
    'a compressed body is refused 415 unsupported_content_encoding with Accept-Encoding: identity, and nothing ' +
      'is created',
    async () => {
      const before = await appCount();
      const r = await exchange(
        `POST /api/v1/app HTTP/1.1\r\nHost: t\r\n${AUTH}Content-Type: application/json\r\nContent-Encoding: ` +
          `gzip\r\nContent-Length: 16\r\n\r\n{"name":"gzip!"}`,
      );
      assert.equal(r.status, 415);
      assert.equal((r.body as { code: string }).code, 'unsupported_content_encoding');
      assert.match(r.text, /accept-encoding: identity/i);
      assert.equal(await appCount(), before);
    },
  );

  test(
    'a credential in the query string is refused 400 ' + 'credentials_in_query, even with a valid Authorization header',
    async () => {
      const tokenShaped = `tidings_${'A'.repeat(43)}`;
      for (const query of [
        'access_token=tidings_leaked',
        'token=abc',
        'api_key=abc',
        `iterator=${tokenShaped}`,
        'token=%ff',
      ]) {
        const res = await api.request('GET', `/api/v1/app?${query}`);
        assert.equal(res.status, 400, query);
        assert.equal(((await res.json()) as { code: string }).code, 'credentials_in_query', query);
      }
      assert.equal((await api.request('GET', '/api/v1/app?limit=5')).status, 200, 'ordinary query parameters pass');
    },
  );

  test(
    'a query value that merely starts with the token prefix (an event type filter) is not a credential, and an ' +
      'undecodable query is a plain 400 bad_request (regression: both were refused as leaked credentials)',
    async () => {
      const filter = await api.request('GET', '/api/v1/app?limit=5&iterator=tidings_signup');
      assert.notEqual(((await filter.json()) as { code?: string }).code, 'credentials_in_query');
      const bad = await api.request('GET', '/api/v1/app?iterator=abc%ff');
      assert.equal(bad.status, 400);
      assert.equal(((await bad.json()) as { code: string }).code, 'bad_request');
    },
  );

  test(
    "an unauthenticated request's body is never read: 401 at " + 'once and the server closes the connection',
    async () => {
      // Headers announce 10 MB; the body never comes. Before, the 401 kept the connection open to read it.
      const r = await exchange(
        'POST /api/v1/app HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: ' +
          '10000000\r\n\r\n{"name":',
        3000,
      );
      assert.equal(r.status, 401);
      assert.notEqual(r.closedAfterMs, null, 'the server closed the connection');
      assert.ok(r.closedAfterMs! < 500, `closed after ${r.closedAfterMs} ms (the request timeout is 3 s)`);
    },
  );

  test('100 Continue is sent only after authentication: never to a caller without a valid token', async () => {
    const refused = await exchange(
      'POST /api/v1/app HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer wrong\r\nContent-Type: ' +
        'application/json\r\nExpect: 100-continue\r\nContent-Length: 16\r\n\r\n',
      3000,
    );
    assert.equal(refused.status, 401);
    assert.doesNotMatch(refused.text, /100 Continue/);

    const body = '{"name":"cont."}';
    const accepted = await rawExchange(
      api.url,
      `POST /api/v1/app HTTP/1.1\r\nHost: t\r\n${AUTH}Content-Type: application/json\r\nExpect: ` +
        `100-continue\r\nConnection: close\r\nContent-Length: ${body.length}\r\n\r\n`,
      {
        timeoutMs: 5000,
        then: (socket) => {
          socket.once('data', (chunk) => {
            assert.match(chunk.toString('latin1'), /^HTTP\/1\.1 100 Continue/);
            socket.write(body);
          });
        },
      },
    );
    assert.equal(accepted.status, 201, accepted.text);
  });

  test('a client that sends its headers too slowly gets 408 request_timeout JSON and is disconnected', async () => {
    const r = await exchange('POST /api/v1/app HTTP/1.1\r\nHost: t\r\n', 5000);
    assert.equal(r.status, 408);
    assert.equal((r.body as { code: string }).code, 'request_timeout');
    assert.ok(
      r.closedAfterMs !== null && r.closedAfterMs < 2000,
      `closed after ${r.closedAfterMs} ms (headers timeout 600 ms, request timeout 3 s)`,
    );
  });

  test(
    'an authenticated body that stalls is cut with 408 request_timeout naming TIDINGS_API_MIN_BODY_RATE after ' +
      'the grace, not after the request timeout, and nothing is created',
    async () => {
      const before = await appCount();
      const r = await exchange(
        `POST /api/v1/app HTTP/1.1\r\nHost: t\r\n${AUTH}Content-Type: application/json\r\nContent-Length: ` +
          `100\r\n\r\n{"name":`,
        8000,
      );
      assert.equal(r.status, 408);
      assert.equal((r.body as { code: string }).code, 'request_timeout');
      assert.match(
        (r.body as { detail: string }).detail,
        /TIDINGS_API_MIN_BODY_RATE \(1024 bytes\/s after TIDINGS_API_BODY_RATE_GRACE 300 ms\)/,
      );
      assert.ok(
        r.closedAfterMs !== null && r.closedAfterMs >= 250 && r.closedAfterMs < 2000,
        `closed after ${r.closedAfterMs} ms (grace 300 ms, request timeout 3 s)`,
      );
      assert.equal(await appCount(), before);
    },
  );

  test(
    'a body announced over TIDINGS_MAX_BODY_BYTES is refused 413 naming the setting before it is read, and its ' +
      'rate watch ends with it (regression: the watch threw an unhandled error once the grace passed)',
    async () => {
      const tooLarge = await exchange(
        `POST /api/v1/app HTTP/1.1\r\nHost: t\r\n${AUTH}Content-Type: application/json\r\nContent-Length: ` +
          `100000\r\n\r\n{"name":`,
        3000,
      );
      assert.equal(tooLarge.status, 413);
      assert.deepEqual(tooLarge.body, {
        code: 'payload_too_large',
        detail: 'The request body is larger than TIDINGS_MAX_BODY_BYTES (65536 bytes)',
      });
      assert.ok(
        tooLarge.closedAfterMs !== null && tooLarge.closedAfterMs < 250,
        `closed after ${tooLarge.closedAfterMs} ms`,
      );
      // A stalled body started now is cut after the same grace, so the first request's watch has fired by then
      // (timers of one duration fire in the order they were set).
      const stalled = await exchange(
        `POST /api/v1/app HTTP/1.1\r\nHost: t\r\n${AUTH}Content-Type: application/json\r\nContent-Length: ` +
          `100\r\n\r\n{"name":`,
        8000,
      );
      assert.equal(stalled.status, 408);
      assert.equal((await api.request('GET', '/livez', { token: null })).status, 200, 'the process still serves');
    },
  );

  test(
    'a body trickled just above TIDINGS_API_MIN_BODY_RATE is not cut by it, and TIDINGS_API_REQUEST_TIMEOUT ' +
      'still ends it with 408',
    async () => {
      const before = await appCount();
      let writer: NodeJS.Timeout | undefined;
      // 64 bytes every 50 ms: 1280 bytes/s, above the 1024 bytes/s minimum; 60,000 bytes announced never arrive in 3 s.
      const r = await rawExchange(
        api.url,
        `POST /api/v1/app HTTP/1.1\r\nHost: t\r\n${AUTH}Content-Type: application/json\r\nContent-Length: ` +
          `60000\r\n\r\n{"name":"`,
        {
          timeoutMs: 8000,
          then: (socket) => {
            let writes = 0;
            writer = setInterval(() => {
              if (socket.destroyed || ++writes > 160) clearInterval(writer);
              else socket.write('x'.repeat(64));
            }, 50);
          },
        },
      );
      clearInterval(writer);
      assert.equal(r.status, 408);
      assert.equal((r.body as { code: string }).code, 'request_timeout');
      assert.doesNotMatch((r.body as { detail: string }).detail, /MIN_BODY_RATE/);
      assert.ok(
        r.closedAfterMs !== null && r.closedAfterMs >= 2500 && r.closedAfterMs < 6000,
        `closed after ${r.closedAfterMs} ms (request timeout 3 s)`,
      );
      assert.equal(await appCount(), before);
    },
  );

  test(
    'a 403 answered before the body is read closes the connection: a trickling caller neither holds it nor gets ' +
      'a second answer (408)',
    async () => {
      const app = await api.svix.application.create({ name: 'edge-403' });
      const appToken = await api.appKey(app.id);
      let writer: NodeJS.Timeout | undefined;
      // An application key may not create applications: refused before the 60,000 announced bytes are read.
      const r = await rawExchange(
        api.url,
        `POST /api/v1/app HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer ${appToken}\r\nContent-Type: ` +
          `application/json\r\nContent-Length: 60000\r\n\r\n{"name":"`,
        {
          timeoutMs: 6000,
          then: (socket) => {
            let writes = 0;
            writer = setInterval(() => {
              if (socket.destroyed || ++writes > 100) clearInterval(writer);
              else socket.write('x'.repeat(64));
            }, 50);
          },
        },
      );
      clearInterval(writer);
      assert.equal(r.status, 403, r.text);
      assert.equal(r.text.match(/HTTP\/1\.1 \d{3}/g)?.length, 1, `one answer only: ${r.text}`);
      assert.match(r.text, /\r\nconnection: close\r\n/i);
      assert.ok(
        r.closedAfterMs !== null && r.closedAfterMs < 2000,
        `closed after ${r.closedAfterMs} ms (request timeout 3 s)`,
      );
    },
  );

  test(
    'a Transfer-Encoding other than chunked alone (gzip, chunked) is refused 501 unsupported_transfer_encoding ' +
      'before the body is read, and nothing is created',
    async () => {
      const before = await appCount();
      // Node refuses a Transfer-Encoding that does not end in chunked itself (400); these end in it.
      for (const coding of ['gzip, chunked', 'deflate,chunked', 'x-custom ,  chunked']) {
        const r = await exchange(
          `POST /api/v1/app HTTP/1.1\r\nHost: t\r\n${AUTH}Content-Type: application/json\r\nTransfer-Encoding: ` +
            `${coding}\r\n\r\n10\r\n{"name":"gzip!"}\r\n0\r\n\r\n`,
        );
        assert.equal(r.status, 501, `${coding}: ${r.text}`);
        assert.equal((r.body as { code: string }).code, 'unsupported_transfer_encoding', coding);
        assert.notEqual(r.closedAfterMs, null, `${coding}: the connection is closed`);
      }
      const body = '{"name":"chunked"}';
      const chunked = await exchange(
        `POST /api/v1/app HTTP/1.1\r\nHost: t\r\n${AUTH}Content-Type: application/json\r\nTransfer-Encoding: ` +
          `chunked\r\nConnection: close\r\n\r\n${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`,
      );
      assert.equal(chunked.status, 201, `chunked alone is accepted: ${chunked.text}`);
      assert.equal(await appCount(), before + 1);
    },
  );

  test(
    'Transfer-Encoding names chunked in any case (Chunked, CHUNKED: RFC 9112 §7 transfer codings are ' +
      'case-insensitive) and is accepted like chunked; gzip, Chunked is still refused 501',
    async () => {
      const before = await appCount();
      for (const [i, coding] of ['Chunked', 'CHUNKED', 'cHuNkEd'].entries()) {
        const body = `{"name":"chunked-${i}"}`;
        const r = await exchange(
          `POST /api/v1/app HTTP/1.1\r\nHost: t\r\n${AUTH}Content-Type: application/json\r\nTransfer-Encoding: ` +
            `${coding}\r\nConnection: close\r\n\r\n${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`,
        );
        assert.equal(r.status, 201, `${coding}: ${r.text}`);
      }
      assert.equal(await appCount(), before + 3);
      const r = await exchange(
        `POST /api/v1/app HTTP/1.1\r\nHost: t\r\n${AUTH}Content-Type: application/json\r\nTransfer-Encoding: ` +
          `gzip, Chunked\r\n\r\n10\r\n{"name":"gzip!"}\r\n0\r\n\r\n`,
      );
      assert.equal(r.status, 501, r.text);
      assert.equal((r.body as { code: string }).code, 'unsupported_transfer_encoding');
      assert.equal(await appCount(), before + 3);
    },
  );

  test(
    'a body sent to a route that takes none (logout, resend, a GET, a DELETE) is refused 400 body_not_allowed ' +
      'naming the route, before any of it is read',
    async () => {
      const routes = [
        ['POST', '/api/v1/auth/logout', 'POST /api/v1/auth/logout'],
        [
          'POST',
          '/api/v1/app/app_x/msg/msg_x/endpoint/ep_x/resend',
          'POST /api/v1/app/:appId/msg/:msgId/endpoint/:endpointId/resend',
        ],
        ['GET', '/api/v1/app', 'GET /api/v1/app'],
        ['DELETE', '/api/v1/app/app_x', 'DELETE /api/v1/app/:appId'],
      ] as const;
      for (const [method, path, route] of routes) {
        const r = await exchange(
          `${method} ${path} HTTP/1.1\r\nHost: t\r\n${AUTH}Content-Type: application/json\r\nContent-Length: ` +
            `1000000\r\n\r\n{}`,
          3000,
        );
        assert.equal(r.status, 400, `${method} ${path}: ${r.text}`);
        assert.deepEqual(r.body, {
          code: 'body_not_allowed',
          detail: `${route} takes no request body; send none (no Content-Length, or Content-Length: 0)`,
        });
        assert.ok(
          r.closedAfterMs !== null && r.closedAfterMs < 1000,
          `${method} ${path}: closed after ${r.closedAfterMs} ms without reading the body`,
        );
      }
      const empty = await exchange(
        `GET /api/v1/app HTTP/1.1\r\nHost: t\r\n${AUTH}Content-Length: 0\r\nConnection: close\r\n\r\n`,
      );
      assert.equal(empty.status, 200, 'Content-Length: 0 is no body');
    },
  );

  test('a route that takes no body accepts none whatever its Content-Type; one taking a body needs it', async () => {
    const app = await api.svix.application.create({ name: 'no body' });
    for (const type of ['application/json', 'text/plain', 'application/octet-stream']) {
      for (const length of ['Content-Length: 0\r\n', '']) {
        const get = await exchange(
          `GET /api/v1/app/${app.id} HTTP/1.1\r\nHost: t\r\n${AUTH}Content-Type: ${type}\r\n${length}` +
            'Connection: close\r\n\r\n',
        );
        assert.equal(get.status, 200, `GET with ${type} ${length}: ${get.text}`);
      }
    }
    const del = await exchange(
      `DELETE /api/v1/app/${app.id} HTTP/1.1\r\nHost: t\r\n${AUTH}Content-Type: application/json\r\n` +
        'Connection: close\r\n\r\n',
    );
    assert.equal(del.status, 204, del.text);
    const post = await exchange(
      `POST /api/v1/app HTTP/1.1\r\nHost: t\r\n${AUTH}Content-Type: application/json\r\nContent-Length: 0\r\n` +
        'Connection: close\r\n\r\n',
    );
    assert.equal(post.status, 400, 'a route that takes a body still needs one');
  });
});
