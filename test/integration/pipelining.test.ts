/**
 * HTTP/1.1 pipelining without reading the answers (PostgreSQL server): a connection's requests run at most
 * TIDINGS_API_PIPELINE_DEPTH at once and at most TIDINGS_API_PIPELINE_QUEUE wait, so unread answers cost
 * bounded memory. Regression: 24 connections each pipelining 1,000 `GET /api/v1/openapi.json` without
 * reading took an API process out of heap in about 19 s; `/metrics`, on the API and on the admin server of
 * a dispatcher-only process, had the same flaw.
 */
import assert from 'node:assert/strict';
import type { Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { loadConfig, settingDefault } from '../../src/config/config.ts';
import { buildAdminServer } from '../../src/main/admin-server.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { createMetrics } from '../../src/observability/metrics.ts';
import { TEST_ENCRYPTION_KEYS } from '../support/cipher.ts';
import { freshServerDatabase, type TestDatabase } from '../support/db.ts';
import { openSocket, rawExchange } from '../support/raw-http.ts';
import { startTidingsProcess, tidingsEnv, type LogLine, type TidingsProcess } from '../support/tidings-process.ts';
import { startApi, type ApiHarness } from './api-harness.ts';

const CLOSED_LINE = 'connection closed: more pipelined requests waiting than TIDINGS_API_PIPELINE_QUEUE';

/** Opens `connections` sockets to `port`, writes `count` pipelined GETs of `path` on each, and never reads. */
async function pipelineWithoutReading(
  port: number,
  connections: number,
  count: number,
  path: string,
): Promise<Socket[]> {
  const request = `GET ${path} HTTP/1.1\r\nHost: t\r\n\r\n`;
  const sockets = await Promise.all(Array.from({ length: connections }, () => openSocket(port)));
  for (const socket of sockets) {
    socket.on('error', () => undefined);
    socket.pause();
    socket.write(request.repeat(count));
  }
  return sockets;
}

/** Resolves when `socket` is closed; rejects after `timeoutMs` (the server never closed it). */
function closedBy(socket: Socket, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`the server did not close the connection within ${timeoutMs} ms`)),
      timeoutMs,
    );
    socket.once('close', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/** Bytes of the heap in use, from the Prometheus text of a Tidings process. */
async function heapUsed(apiUrl: string): Promise<number> {
  const text = await (await fetch(`${apiUrl}/metrics`)).text();
  const value = /^tidings_nodejs_heap_size_used_bytes (\d+(?:\.\d+)?(?:e\+\d+)?)$/m.exec(text)?.[1];
  assert.ok(value !== undefined, 'the heap gauge is served');
  return Number(value);
}

describe('an API process under unread pipelined requests', () => {
  let database: TestDatabase;
  let api: TidingsProcess;
  before(async () => {
    database = await freshServerDatabase();
    api = await startTidingsProcess({
      role: 'api',
      env: tidingsEnv({
        DATABASE_URL: database.url!,
        TIDINGS_ENCRYPTION_KEYS: TEST_ENCRYPTION_KEYS,
        TIDINGS_API_TOKEN: 'pipelining-admin-token-0123456789',
        HOST: '127.0.0.1',
        PORT: '0',
        TIDINGS_LOG_LEVEL: 'info',
        // A heap the unbounded answers of the regression overflow within a few hundred of them (170 KB each).
        NODE_OPTIONS: '--max-old-space-size=192',
      }),
    });
  });
  after(async () => {
    await api?.stop();
    await database?.drop();
  });

  test(
    '24 connections × 1,000 pipelined OpenAPI requests never read: the process stays up, its heap grows by less ' +
      'than 64 MB, and every such connection is closed',
    async () => {
      const port = Number(new URL(api.apiUrl!).port);
      const heapBefore = await heapUsed(api.apiUrl!);
      const depth = settingDefault('apiPipelineDepth');
      const sockets = await pipelineWithoutReading(port, 24, 1000, '/api/v1/openapi.json');
      try {
        // Closures are logged through the refusal sampler: lines, then a summary of those not written.
        const accounted = (): number =>
          api.logs(CLOSED_LINE).length +
          api.logs((l: LogLine) => l.kind === 'refused request').reduce((n, l) => n + Number(l.suppressed), 0);
        await api.waitForLog(() => accounted() >= 24, 60_000, 'every pipelining connection closed');
        assert.ok(api.alive, 'the process is alive');
        const live = await fetch(`${api.apiUrl}/livez`);
        assert.equal(live.status, 200);
        const growth = (await heapUsed(api.apiUrl!)) - heapBefore;
        console.log(
          JSON.stringify({
            figure: 'pipelining-openapi',
            connections: 24,
            pipelined: 1000,
            depth,
            heapGrowthMb: Math.round(growth / 1e6),
          }),
        );
        assert.ok(growth < 64e6, `the heap grew by ${Math.round(growth / 1e6)} MB`);
      } finally {
        for (const socket of sockets) socket.destroy();
      }
    },
  );
});

describe('pipelining limits of one connection', () => {
  let api: ApiHarness;
  before(async () => {
    api = await startApi(freshServerDatabase, {
      TIDINGS_API_PIPELINE_DEPTH: '2',
      TIDINGS_API_PIPELINE_QUEUE: '8',
      TIDINGS_PUBLIC_RATE_LIMIT: '0',
      TIDINGS_API_KEEP_ALIVE_TIMEOUT: '60s',
    });
  });
  after(async () => api?.close());

  test('a client that pipelines within depth + queue and reads its answers gets every answer, in order', async () => {
    const paths = [
      '/livez',
      '/api/v1/health',
      '/livez',
      '/readyz',
      '/api/v1/health',
      '/livez',
      '/api/v1/openapi.json',
      '/livez',
      '/readyz',
      '/api/v1/health',
    ];
    const text = paths
      .map((p, i) => `GET ${p} HTTP/1.1\r\nHost: t\r\n${i === paths.length - 1 ? 'Connection: close\r\n' : ''}\r\n`)
      .join('');
    const r = await rawExchange(api.url, text, { timeoutMs: 10_000 });
    const statuses = [...r.text.matchAll(/HTTP\/1\.1 (\d{3}) [A-Z]/g)].map((m) => Number(m[1]));
    assert.deepEqual(statuses, [200, 204, 200, 200, 204, 200, 200, 200, 200, 204]);
  });

  test(
    'a client that pipelines 1,000 requests without reading is closed at the queue, and no more than the depth ' +
      'ran at once',
    async () => {
      const before = api.app.connectionStats().pipeline;
      const port = Number(new URL(api.url).port);
      const [socket] = await pipelineWithoutReading(port, 1, 1000, '/api/v1/openapi.json');
      // The close is decided while Node parses the pipelined requests, before any answer is read: reading
      // now lets the answers that ran arrive, then the server's close.
      const closed = closedBy(socket!, 10_000);
      let received = '';
      socket!.on('data', (chunk: Buffer) => {
        received += chunk.toString('latin1');
      });
      socket!.resume();
      await closed.finally(() => socket!.destroy());
      assert.ok(
        (received.match(/HTTP\/1\.1 \d{3} [A-Z]/g)?.length ?? 0) <= 2,
        'no more answers than TIDINGS_API_PIPELINE_DEPTH were built',
      );
      const stats = api.app.connectionStats().pipeline;
      assert.equal(stats.closed, before.closed + 1);
      assert.ok(stats.peakRunning <= 2, `at most TIDINGS_API_PIPELINE_DEPTH ran at once: ${stats.peakRunning}`);
      assert.ok(stats.peakWaiting <= 8, `at most TIDINGS_API_PIPELINE_QUEUE waited: ${stats.peakWaiting}`);
      assert.equal((await api.request('GET', '/livez', { token: null })).status, 200);
    },
  );
});

describe('the admin server of a dispatcher-only process', () => {
  test(
    'pipelined /metrics never read are bounded the same way, and its routes are rate-limited per client address ' +
      'naming TIDINGS_PUBLIC_RATE_LIMIT',
    async () => {
      // A long keep-alive: only the pipelining limit may close the connection within the test's wait.
      const config = loadConfig({
        TIDINGS_API_PIPELINE_DEPTH: '2',
        TIDINGS_API_PIPELINE_QUEUE: '8',
        TIDINGS_PUBLIC_RATE_LIMIT: '1',
        TIDINGS_PUBLIC_RATE_BURST: '5',
        TIDINGS_API_KEEP_ALIVE_TIMEOUT: '60s',
      });
      let renders = 0;
      const metrics = createMetrics({ defaultMetrics: false });
      const registry = metrics.registry;
      const render = registry.metrics.bind(registry);
      registry.metrics = async () => {
        renders++;
        return render();
      };
      const admin = buildAdminServer({
        logger: createLogger({ level: 'silent' }),
        registry,
        ready: async () => true,
        config,
      });
      await admin.listen({ host: '127.0.0.1', port: 0 });
      try {
        const url = `http://127.0.0.1:${(admin.server.address() as { port: number }).port}`;
        const [socket] = await pipelineWithoutReading(Number(new URL(url).port), 1, 1000, '/metrics');
        const closed = closedBy(socket!, 10_000);
        // Reading now lets the answers that ran arrive, then the server's close.
        let received = '';
        socket!.on('data', (chunk: Buffer) => {
          received += chunk.toString('latin1');
        });
        socket!.resume();
        await closed.finally(() => socket!.destroy());
        const answers = received.match(/HTTP\/1\.1 \d{3} [A-Z]/g)?.length ?? 0;
        assert.ok(
          answers <= 2 && renders <= 2,
          `at most TIDINGS_API_PIPELINE_DEPTH ran: ${answers} answers, ${renders} metrics texts`,
        );
        const statuses: number[] = [];
        let refused: Response | undefined;
        for (let i = 0; i < 6; i++) {
          const res = await fetch(`${url}/livez`);
          statuses.push(res.status);
          if (res.status === 429) refused = res;
          else await res.body?.cancel();
        }
        assert.ok(refused !== undefined, `a burst past TIDINGS_PUBLIC_RATE_BURST is refused: ${statuses.join(',')}`);
        const body = (await refused.json()) as { code: string; detail: string };
        assert.equal(body.code, 'rate_limited');
        assert.match(body.detail, /TIDINGS_PUBLIC_RATE_LIMIT=1\/s, TIDINGS_PUBLIC_RATE_BURST=5/);
      } finally {
        await admin.close();
      }
    },
  );
});
