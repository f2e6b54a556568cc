/**
 * What the API's log says about clients that misbehave (PostgreSQL server, API and dispatcher in one
 * process, its log captured): an aborted upload is an aborted request, not a database outage; a credential
 * sent in a query string never reaches the log.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startInProcessWorld, type InProcessWorld } from '../support/in-process.ts';
import { openSocket } from '../support/raw-http.ts';

describe('request logs', () => {
  let world: InProcessWorld;
  before(async () => {
    // One line a second for refusals and client aborts: what is past it is counted, not written.
    world = await startInProcessWorld({ TIDINGS_REFUSAL_LOG_RATE: '1' });
  });
  after(async () => world?.stop());

  test(
    'an aborted client upload is logged as an aborted request, not as "database unavailable", and without a ' +
      'stack trace',
    async () => {
      const from = world.logs.lines.length;
      const socket = await openSocket(Number(new URL(world.tidings.apiUrl!).port));
      socket.on('error', () => undefined);
      socket.write(
        `POST /api/v1/app HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer ${world.token}\r\nContent-Type: ` +
          `application/json\r\nContent-Length: 5000\r\n\r\n{"name":"half`,
      );
      // Once the head has been read (the request is authenticated and its body awaited), the client goes away.
      await new Promise((resolve) => setImmediate(resolve));
      setTimeout(() => socket.destroy(), 50);
      const line = await world.logs.waitFor(
        (l) => world.logs.lines.indexOf(l) >= from && /aborted/.test(String(l.msg)),
        10_000,
        'the aborted-request line',
      );
      assert.equal(line.level, 30, 'info, not a warning');
      const later = world.logs.lines.slice(from);
      assert.deepEqual(
        later.filter((l) => l.msg === 'database unavailable'),
        [],
      );
      assert.deepEqual(
        later.filter((l) => typeof (l.err as { stack?: unknown } | undefined)?.stack === 'string').map((l) => l.msg),
        [],
        'no stack trace',
      );
    },
  );

  test(
    'client aborts are sampled like refusals: a burst writes at most the rate, and a summary counts the rest ' +
      '(regression: one line each)',
    async () => {
      const from = world.logs.lines.length;
      const port = Number(new URL(world.tidings.apiUrl!).port);
      const aborts = 12;
      const startedAt = Date.now();
      await Promise.all(
        Array.from({ length: aborts }, async () => {
          const socket = await openSocket(port);
          socket.on('error', () => undefined);
          socket.write(
            `POST /api/v1/app HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer ${world.token}\r\nContent-Type: ` +
              `application/json\r\nContent-Length: 5000\r\n\r\n{"name":"half`,
          );
          await new Promise((resolve) => setTimeout(resolve, 50));
          socket.destroy();
        }),
      );
      const since = (l: Record<string, unknown>): boolean => world.logs.lines.indexOf(l) >= from;
      const written = () => world.logs.lines.filter((l) => since(l) && l.aborted === true).length;
      const suppressed = () =>
        world.logs.lines
          .filter((l) => since(l) && l.kind === 'client abort')
          .reduce((n, l) => n + Number(l.suppressed), 0);
      await world.logs.waitFor(() => written() + suppressed() >= aborts, 10_000, 'every abort written or counted');
      const windows = Math.ceil((Date.now() - startedAt) / 1000) + 1;
      assert.ok(written() <= windows, `${written()} abort lines in ${windows} one-second windows at 1 line/s`);
      assert.ok(suppressed() > 0, 'the rest are counted in a summary line');
    },
  );

  test('a token in the query string is refused and never reaches the log', async () => {
    const leaked = 'tidings_querystring_secret_0123456789';
    const res = await fetch(`${world.tidings.apiUrl}/api/v1/app?access_token=${leaked}&limit=1`);
    assert.equal(res.status, 400);
    assert.equal(((await res.json()) as { code: string }).code, 'credentials_in_query');
    const line = await world.logs.waitFor(
      (l) => l.msg === 'request completed' && String((l.req as { url?: string }).url).includes('access_token='),
      5000,
      'the request line',
    );
    assert.equal((line.req as { url: string }).url, '/api/v1/app?access_token=[redacted]&limit=1');
    assert.ok(!world.logs.text().includes(leaked), 'the token is nowhere in the log');
  });
});
