/**
 * Hostile clients without a credential (PostgreSQL server, API and dispatcher in one process, a receiver
 * process on 127.0.0.1): hundreds of silent or slow connections are held to TIDINGS_API_MAX_CONNECTIONS by
 * evicting the ones that never sent a request, so authenticated publishing and the dispatcher go on;
 * failed authentications are rate-limited per address, and their log lines sampled.
 */
import assert from 'node:assert/strict';
import type { Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { startInProcessWorld, type InProcessWorld } from '../support/in-process.ts';
import { openSocket } from '../support/raw-http.ts';

const MAX_CONNECTIONS = 100;
/** Attack sockets opened in all, and kept open at once (bounded in count; each ends within the headers timeout). */
const ATTACK_TOTAL = 2500;
const ATTACK_OPEN = 300;
const PUBLISHES = 30;

/**
 * Keeps `open` hostile connections to `port` until `stop()` or `total` were opened: two in three send half a
 * request head and go silent (slowloris), one in three sends a complete head without a credential that
 * announces a 1 MB body and then sends 8 bytes of it. Returns how many were opened and closed by the server;
 * `firstClose` resolves when the server first closes one without answering (at the cap).
 */
function attack(
  port: number,
  open: number,
  total: number,
): { stop(): Promise<void>; figures(): { opened: number; closedByServer: number }; firstClose: Promise<void> } {
  let closed!: () => void;
  const firstClose = new Promise<void>((resolve) => {
    closed = resolve;
  });
  let opened = 0;
  let closedByServer = 0;
  let stopped = false;
  const live = new Set<Socket>();
  const one = async (): Promise<void> => {
    if (stopped || opened >= total) return;
    const n = ++opened;
    let socket: Socket;
    try {
      socket = await openSocket(port);
    } catch {
      return void one();
    }
    live.add(socket);
    socket.on('error', () => undefined);
    let answered = false;
    socket.on('data', () => {
      answered = true; // the answers are read (and dropped), so the server's close is seen
    });
    socket.on('close', () => {
      live.delete(socket);
      if (!stopped) {
        closedByServer++;
        if (!answered) closed(); // closed without a word: evicted or refused at the cap
        void one();
      }
    });
    if (n % 3 === 0)
      socket.write(
        'POST /api/v1/app HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: ' +
          '1000000\r\n\r\n{"name":',
      );
    else socket.write('POST /api/v1/app/app_x/msg HTTP/1.1\r\nHost: t\r\nContent-');
  };
  for (let i = 0; i < open; i++) void one();
  return {
    async stop() {
      stopped = true;
      await Promise.all(
        [...live].map((s) => new Promise<void>((resolve) => s.once('close', () => resolve()).destroy())),
      );
    },
    figures: () => ({ opened, closedByServer }),
    firstClose,
  };
}

describe('slow unauthenticated connections', () => {
  let world: InProcessWorld;
  before(async () => {
    world = await startInProcessWorld({
      TIDINGS_API_MAX_CONNECTIONS: String(MAX_CONNECTIONS),
      TIDINGS_API_HEADERS_TIMEOUT: '2s',
      TIDINGS_API_REQUEST_TIMEOUT: '4s',
    });
  });
  after(async () => world?.stop());

  test(
    'hundreds of slow unauthenticated connections stay under the connection cap and do not stop authenticated ' +
      'publishing or the dispatcher',
    async () => {
      const app = await world.svix.application.create({ name: 'under siege' });
      await world.endpoint(app.id, '/siege');
      const port = Number(new URL(world.tidings.apiUrl!).port);
      const siege = attack(port, ATTACK_OPEN, ATTACK_TOTAL);
      const latencies: number[] = [];
      try {
        // The attack has filled the cap once the server closes a connection without answering it.
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([
          siege.firstClose,
          new Promise((_, reject) => {
            timer = setTimeout(
              () =>
                reject(
                  new Error(
                    'the server never closed a connection at the cap: ' +
                      `${JSON.stringify({ ...siege.figures(), ...world.tidings.apiConnections!() })}`,
                  ),
                ),
              30_000,
            );
          }),
        ]).finally(() => clearTimeout(timer));
        assert.ok(
          world.tidings.apiConnections!().evicted > 0,
          `the server evicts: ${JSON.stringify({ ...siege.figures(), ...world.tidings.apiConnections!() })}`,
        );
        for (let i = 0; i < PUBLISHES; i++) {
          const started = performance.now();
          await world.svix.message.create(app.id, { eventType: 'siege.tick', payload: { i } });
          latencies.push(performance.now() - started);
        }
        await world.receiver.waitForCount(PUBLISHES, 30_000, (r) => r.path === '/siege');
      } finally {
        await siege.stop();
      }
      const stats = world.tidings.apiConnections!();
      const figures = siege.figures();
      const worst = Math.max(...latencies);
      console.log(
        JSON.stringify({
          figure: 'slow-clients',
          ...figures,
          ...stats,
          publishes: PUBLISHES,
          worstPublishMs: Math.round(worst),
        }),
      );
      assert.ok(stats.peak <= MAX_CONNECTIONS, `peak ${stats.peak} open API connections, cap ${MAX_CONNECTIONS}`);
      assert.ok(stats.evicted > 0, 'silent connections were evicted');
      assert.ok(figures.opened > MAX_CONNECTIONS * 2, `the attack opened ${figures.opened} connections`);
      assert.ok(worst < 5000, `every authenticated publish answered within 5 s (worst ${Math.round(worst)} ms)`);
    },
  );

  test(
    'past TIDINGS_AUTH_FAILURE_LIMIT an address gets 429 for tokens that are not valid, while a valid token ' +
      'keeps working',
    async () => {
      const call = (token: string) =>
        fetch(`${world.tidings.apiUrl}/api/v1/app`, { headers: { authorization: `Bearer ${token}` } });
      assert.equal((await call(world.token)).status, 200);
      let unauthorized = 0;
      const statuses: number[] = [];
      // The failure window is 10 s (the default): the whole loop is well inside it.
      for (let i = 0; i < 60; i++) {
        const res = await call(`tidings_not_a_key_${i}`);
        statuses.push(res.status);
        if (res.status === 401) unauthorized++;
        await res.body?.cancel();
      }
      assert.ok(unauthorized <= 40, `${unauthorized} answers 401 before the limit (20 per window, plus the siege's)`);
      const refused = await call('tidings_not_a_key_again');
      assert.equal(refused.status, 429);
      assert.equal(((await refused.json()) as { code: string }).code, 'rate_limited');
      assert.ok(Number(refused.headers.get('retry-after')) >= 1);
      assert.equal((await call(world.token)).status, 200, 'a valid token is not refused');
    },
  );

  test(
    'refused requests are sampled in the log: a flood of 429s writes at most TIDINGS_REFUSAL_LOG_RATE lines a ' +
      'second, and summaries count the rest',
    async () => {
      const startLine = world.logs.lines.length;
      const started = performance.now();
      const FLOOD = 600;
      for (let batch = 0; batch < FLOOD / 20; batch++) {
        await Promise.all(
          Array.from({ length: 20 }, async () =>
            (
              await fetch(`${world.tidings.apiUrl}/api/v1/app`, { headers: { authorization: 'Bearer tidings_flood' } })
            ).body?.cancel(),
          ),
        );
      }
      const seconds = (performance.now() - started) / 1000;
      const refusal = (l: Record<string, unknown>) =>
        l.msg === 'request completed' &&
        [401, 429].includes(Number((l.res as { statusCode?: number } | undefined)?.statusCode));
      const counted = () => {
        const lines = world.logs.lines.slice(startLine);
        return {
          written: lines.filter(refusal).length,
          suppressed: lines.filter((l) => l.kind === 'refused request').reduce((n, l) => n + Number(l.suppressed), 0),
        };
      };
      // Each window's summary is written at its end: wait (on log lines) until every refusal is accounted for.
      await world.logs.waitFor(
        () => counted().written + counted().suppressed >= FLOOD,
        5000,
        'summaries accounting for every refusal',
      );
      const { written, suppressed } = counted();
      console.log(
        JSON.stringify({
          figure: 'refusal-log',
          flood: FLOOD,
          seconds: Number(seconds.toFixed(2)),
          written,
          suppressed,
        }),
      );
      assert.ok(
        written <= 10 * (Math.ceil(seconds) + 1),
        `${written} lines for ${FLOOD} refusals in ${seconds.toFixed(1)} s`,
      );
    },
  );
});
