/**
 * Requests in progress per credential and per client address (PostgreSQL server): slow bodies of one
 * credential (TIDINGS_API_CREDENTIAL_CONCURRENCY) or one address (TIDINGS_API_ADDRESS_CONCURRENCY) cannot
 * take every connection or slot of the process; one more is 429 `concurrency_limited` naming the setting, and
 * the others are served beside them. Regression: any credential — even a view-only portal token on
 * `POST /auth/logout` — could hold every API connection for the request timeout with slow bodies, and one
 * tenant's connections raised another's publish latency a hundredfold.
 */
import assert from 'node:assert/strict';
import type { Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { freshServerDatabase } from '../support/db.ts';
import { openSocket, parseResponse, rawExchange } from '../support/raw-http.ts';
import { startApi, type ApiHarness } from './api-harness.ts';

/** A request whose body is announced and never finished, holding its slot; `finish` sends the rest. */
interface SlowBody {
  readonly socket: Socket;
  /** Sends the rest of the body and resolves with the answer's status once the server has closed. */
  finish(): Promise<number | null>;
}

/**
 * Starts a `POST path` with `Expect: 100-continue` and a body it only begins, and resolves once the server
 * has taken it in (its `100 Continue` is written after authentication and the in-progress limits), or with
 * the final answer when the server refused it instead.
 */
async function slowBody(
  api: ApiHarness,
  path: string,
  token: string,
  body: string,
  forwardedFor?: string,
): Promise<SlowBody | { readonly refused: number | null; readonly text: string }> {
  const socket = await openSocket(Number(new URL(api.url).port));
  socket.on('error', () => undefined);
  let text = '';
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  const head =
    `POST ${path} HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer ${token}\r\nContent-Type: ` +
    `application/json\r\nConnection: close\r\n` +
    `${forwardedFor === undefined ? '' : `X-Forwarded-For: ${forwardedFor}\r\n`}Expect: ` +
    `100-continue\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`;
  const answered = new Promise<'continue' | 'final'>((resolve) => {
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('latin1');
      if (/^HTTP\/1\.1 100 /.test(text) && !/\r\n\r\nHTTP\/1\.1 /.test(text)) resolve('continue');
      else resolve('final');
    });
    socket.once('close', () => resolve('final'));
  });
  socket.write(head);
  if ((await answered) === 'final') {
    await closed;
    return { refused: parseResponse(text).status, text };
  }
  socket.write(body.slice(0, 1));
  return {
    socket,
    async finish() {
      socket.write(body.slice(1));
      await closed;
      return parseResponse(text).status;
    },
  };
}

const held = (s: Awaited<ReturnType<typeof slowBody>>): SlowBody => {
  assert.ok('socket' in s, `the slow request was taken in: ${'text' in s ? s.text : ''}`);
  return s;
};

describe('requests in progress per credential', () => {
  let api: ApiHarness;
  before(async () => {
    // No minimum body rate here: the slow bodies must hold their slots until the test finishes them.
    api = await startApi(freshServerDatabase, {
      TIDINGS_API_CREDENTIAL_CONCURRENCY: '3',
      TIDINGS_API_MIN_BODY_RATE: '0',
      TIDINGS_API_REQUEST_TIMEOUT: '30s',
    });
  });
  after(async () => api?.close());

  test(
    'a credential holding TIDINGS_API_CREDENTIAL_CONCURRENCY slow bodies gets 429 concurrency_limited for one ' +
      'more, while another credential is served; its slots come back when its requests end',
    async () => {
      const app = await api.svix.application.create({ name: 'noisy tenant' });
      const quiet = await api.svix.application.create({ name: 'quiet tenant' });
      const noisy = await api.appKey(app.id);
      const other = await api.appKey(quiet.id);
      const publish = JSON.stringify({ eventType: 'slow.body', payload: { pad: 'x'.repeat(64) } });
      const slow = [
        held(await slowBody(api, `/api/v1/app/${app.id}/msg`, noisy, publish)),
        held(await slowBody(api, `/api/v1/app/${app.id}/msg`, noisy, publish)),
        held(await slowBody(api, `/api/v1/app/${app.id}/msg`, noisy, publish)),
      ];
      try {
        const refused = await rawExchange(
          api.url,
          `GET /api/v1/app/${app.id} HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer ${noisy}\r\n\r\n`,
        );
        assert.equal(refused.status, 429, refused.text);
        assert.deepEqual(refused.body, {
          code: 'concurrency_limited',
          detail:
            'Too many requests of this credential in progress at once (TIDINGS_API_CREDENTIAL_CONCURRENCY=3); ' +
            'retry in 1 s',
        });
        assert.match(refused.text, /retry-after: 1\r\n/i);
        assert.notEqual(refused.closedAfterMs, null, 'the refused connection is closed');

        const started = performance.now();
        const res = await api.request('POST', `/api/v1/app/${quiet.id}/msg`, {
          token: other,
          body: JSON.stringify({ eventType: 'quiet', payload: {} }),
        });
        assert.equal(res.status, 202, 'another credential publishes beside the noisy one');
        assert.ok(performance.now() - started < 5000);
      } finally {
        assert.deepEqual(
          await Promise.all(slow.map((s) => s.finish())),
          [202, 202, 202],
          'the slow bodies, once finished, are published',
        );
      }
      assert.equal(
        (await api.request('GET', `/api/v1/app/${app.id}`, { token: noisy })).status,
        200,
        'the slots are free again',
      );
    },
  );

  test(
    'a view-only portal token cannot hold a connection with a slow body on POST /auth/logout: the body is ' +
      'refused at once',
    async () => {
      const app = await api.svix.application.create({ name: 'portal' });
      const portal = await api.svix.authentication.appPortalAccess(app.id, { readOnly: true });
      const r = await slowBody(api, '/api/v1/auth/logout', portal.token, '{"pad":"xxxxxxxxxxxxxxxx"}');
      if ('socket' in r) r.socket.destroy();
      assert.ok('refused' in r, 'no 100 Continue: the body is never asked for');
      assert.equal(r.refused, 400);
      assert.match(r.text, /"code":"body_not_allowed"/);
    },
  );
});

describe('requests in progress per client address', () => {
  let api: ApiHarness;
  before(async () => {
    api = await startApi(freshServerDatabase, {
      TIDINGS_API_ADDRESS_CONCURRENCY: '3',
      TIDINGS_TRUSTED_PROXIES: '127.0.0.1/32',
      TIDINGS_API_MIN_BODY_RATE: '0',
      TIDINGS_API_REQUEST_TIMEOUT: '30s',
    });
  });
  after(async () => api?.close());

  test(
    'one address holding TIDINGS_API_ADDRESS_CONCURRENCY slow bodies with as many credentials gets 429 for one ' +
      'more, whatever its credential; another address behind the same proxy is served',
    async () => {
      const app = await api.svix.application.create({ name: 'many keys' });
      const keys = [
        await api.appKey(app.id),
        await api.appKey(app.id),
        await api.appKey(app.id),
        await api.appKey(app.id),
      ];
      const body = JSON.stringify({ eventType: 'slow.body', payload: {} });
      const slow = [
        held(await slowBody(api, `/api/v1/app/${app.id}/msg`, keys[0]!, body, '203.0.113.9')),
        held(await slowBody(api, `/api/v1/app/${app.id}/msg`, keys[1]!, body, '203.0.113.9')),
        held(await slowBody(api, `/api/v1/app/${app.id}/msg`, keys[2]!, body, '203.0.113.9')),
      ];
      try {
        const refused = await api.request('GET', `/api/v1/app/${app.id}`, {
          token: keys[3]!,
          headers: { 'x-forwarded-for': '203.0.113.9' },
        });
        assert.equal(refused.status, 429);
        assert.deepEqual(await refused.json(), {
          code: 'concurrency_limited',
          detail:
            'Too many requests from this client address in progress at once (TIDINGS_API_ADDRESS_CONCURRENCY=3); ' +
            'retry in 1 s',
        });
        assert.equal(
          (
            await api.request('GET', `/api/v1/app/${app.id}`, {
              token: keys[3]!,
              headers: { 'x-forwarded-for': '203.0.113.10' },
            })
          ).status,
          200,
        );
      } finally {
        await Promise.all(slow.map((s) => s.finish()));
      }
    },
  );
});
