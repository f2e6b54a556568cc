/**
 * Failure table (docs/guides/failure-table.md), scenario 10: a randomised mix of the faults of scenarios 1–8 under a
 * publish load, drawn from a seed that is printed first so a failure can be replayed: `TIDINGS_FAULT_SEED=<seed> npm
 * run test:faults`.
 *
 * The stage: a private cluster; one API process (direct); three dispatchers, each on its own database path
 * through a TCP proxy, kept alive by a supervisor that restarts whichever exits (as an orchestrator
 * would); a receiver with two endpoints. The load publishes with Idempotency-Keys and retries until
 * accepted, across API restarts. Pass: nothing acknowledged is lost, zero invalid signatures, zero rows
 * stuck, duplicates only where leases were reclaimed or released.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Ledger, printSummary, startLoad } from '../support/fault-load.ts';
import { ApiClient, createWorld, type FaultWorld } from '../support/fault-world.ts';
import { mulberry32 } from '../support/random.ts';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.ts';
import type { TidingsProcess } from '../support/tidings-process.ts';

const WAIT_MS = 120_000;
const STEPS = 8;
const LEASE_MS = 3_000;
const SEED =
  process.env.TIDINGS_FAULT_SEED !== undefined && process.env.TIDINGS_FAULT_SEED !== ''
    ? Number(process.env.TIDINGS_FAULT_SEED)
    : Math.floor(Math.random() * 2 ** 31);

const FAULTS = [
  'kill-dispatcher',
  'term-dispatcher',
  'stop-dispatcher',
  'cut-path',
  'stall-path',
  'db-restart-fast',
  'db-restart-immediate',
  'kill-api',
  'receiver-500',
  'arm-fault-point',
] as const;
type Fault = (typeof FAULTS)[number];

/** One dispatcher seat: its current process, its database path, and the supervisor's bookkeeping. */
interface Slot {
  readonly index: number;
  readonly proxy: TcpProxy;
  proc: TidingsProcess | null;
  generation: number;
  /** A fault point for the next incarnation only. */
  nextFaultPoint: string | null;
  restarting: Promise<void> | null;
  restarts: number;
}

describe('randomised mix of faults', () => {
  let world: FaultWorld;
  let closing = false;
  const slots: Slot[] = [];

  before(async () => {
    console.log(`fault-seed TIDINGS_FAULT_SEED=${SEED} (replay: TIDINGS_FAULT_SEED=${SEED} npm run test:faults)`);
    world = await createWorld({ settings: { TIDINGS_BREAKER_COOLDOWN: '1s' } });
  });
  after(async () => {
    closing = true;
    for (const s of slots) await s.restarting?.catch(() => undefined);
    for (const s of slots) await s.proxy.close();
    await world?.close();
  });

  test(
    'scenario 10: a seeded random mix of faults under load loses nothing, signs everything validly and leaves no ' +
      `row stuck (seed ${SEED})`,
    async () => {
      const started = Date.now();
      const rand = mulberry32(SEED);
      const pick = <T>(items: readonly T[]): T => items[Math.floor(rand() * items.length)] as T;
      const between = (lo: number, hi: number): number => lo + Math.floor(rand() * (hi - lo + 1));
      const plan: string[] = [];

      let apiProcess: TidingsProcess | null = await world.startApi('api-g0');
      let apiClient: ApiClient | null = new ApiClient(apiProcess.apiUrl ?? '');
      let apiGeneration = 0;
      const { appId, endpoints } = await world.setupApp(apiClient, 2, 's10');
      const paths = endpoints.map((e) => e.path);
      for (const path of paths) await world.receiver.script(path, [], { status: 200, delayMs: 20 });

      const viaProxy = (proxy: TcpProxy): string =>
        world.databaseUrl.replace(`:${world.cluster.port}/`, `:${proxy.port}/`);
      const launch = async (slot: Slot): Promise<void> => {
        for (let tries = 0; tries < 20 && !closing; tries++) {
          slot.generation += 1;
          const faultPoint = slot.nextFaultPoint;
          slot.nextFaultPoint = null;
          try {
            const proc = await world.startDispatcher(`s10-d${slot.index}-g${slot.generation}`, {
              DATABASE_URL: viaProxy(slot.proxy),
              // Each failed store call of an outage is a debug line (at warn: one when it starts, one when it ends).
              TIDINGS_LOG_LEVEL: 'debug',
              ...(faultPoint === null ? {} : { TIDINGS_TEST_FAULT_POINTS: faultPoint }),
            });
            slot.proc = proc;
            // The supervisor: whatever ends this process, start the next incarnation.
            void proc.waitForExit(24 * 3_600_000).then(() => {
              if (closing || slot.proc !== proc) return;
              slot.restarts += 1;
              slot.restarting = launch(slot).finally(() => {
                slot.restarting = null;
              });
            });
            return;
          } catch {
            // The database or this path may be down for a moment (a fault in progress): try again shortly.
            await new Promise((resolve) => setTimeout(resolve, 500));
          }
        }
        throw new Error(`slot ${slot.index}: the dispatcher did not start in 20 tries`);
      };
      for (let i = 0; i < 3; i++) {
        const slot: Slot = {
          index: i,
          proxy: await startTcpProxy({ host: '127.0.0.1', port: world.cluster.port }),
          proc: null,
          generation: 0,
          nextFaultPoint: null,
          restarting: null,
          restarts: 0,
        };
        slots.push(slot);
      }
      await Promise.all(slots.map((s) => launch(s)));
      const settled = async (): Promise<void> => {
        for (const s of slots) await s.restarting;
      };
      const live = (s: Slot): TidingsProcess => {
        assert.ok(s.proc !== null);
        return s.proc;
      };
      /** Waits until the database clock has moved `ms` past now (a stall must outlast the lease). */
      const waitDbClock = async (ms: number): Promise<void> => {
        const [{ t0 }] = (await world.query<{ t0: Date }>('SELECT clock_timestamp() AS t0')) as [{ t0: Date }];
        await world.waitForRows<{ ok: boolean }>(
          "SELECT clock_timestamp() >= $1::timestamptz + $2 * interval '1 millisecond' AS ok",
          [t0, ms],
          (r) => r[0]?.ok === true,
          WAIT_MS,
          `database clock +${ms} ms`,
        );
      };

      const ledger = new Ledger();
      const load = startLoad({
        api: () => apiClient,
        appId,
        paths,
        ledger,
        maxMessages: 3_000,
        maxMs: 300_000,
        concurrency: 2,
        paceMs: 30,
        retry: { maxTries: 80, backoffMs: 250 },
      });

      for (let step = 1; step <= STEPS; step++) {
        const before = load.accepted;
        await load.waitFor(() => load.accepted >= before + 15, WAIT_MS, `15 more accepted before step ${step}`);
        await settled();
        const fault: Fault = pick(FAULTS);
        const slot = pick(slots);
        const t0 = Date.now();
        let detail = '';
        switch (fault) {
          case 'kill-dispatcher':
            detail = live(slot).name;
            await live(slot).kill();
            break;
          case 'term-dispatcher':
            detail = live(slot).name;
            await live(slot).stop();
            break;
          case 'stop-dispatcher': {
            const p = live(slot);
            detail = p.name;
            p.pause();
            try {
              await waitDbClock(LEASE_MS + between(200, 1_500));
            } finally {
              p.resume();
            }
            break;
          }
          case 'cut-path': {
            const p = live(slot);
            detail = p.name;
            const cutAt = Date.now();
            slot.proxy.setMode('cut');
            try {
              // Any failed store call shows the cut: a dispatcher whose window is full of outcomes waiting to be
              // recorded does not claim until they are written, so its failures are records and heartbeats.
              const isFailure = (l: Record<string, unknown>): boolean =>
                l.msg === 'store call failed' && Number(l.time) >= cutAt;
              const want = between(1, 3);
              while (p.alive && p.logs(isFailure).length < want) {
                const seen = p.logs(isFailure).length;
                await p
                  .waitForLog((l) => isFailure(l) && p.logs(isFailure).length > seen, WAIT_MS, 'a failed store call')
                  .catch((error: unknown) => {
                    if (p.alive) throw error;
                  });
              }
            } finally {
              slot.proxy.setMode('pass');
            }
            break;
          }
          case 'stall-path':
            detail = live(slot).name;
            slot.proxy.setMode('stall');
            try {
              await waitDbClock(LEASE_MS + between(200, 1_500));
            } finally {
              slot.proxy.setMode('pass');
            }
            break;
          case 'db-restart-fast':
            await world.cluster.restart('fast');
            break;
          case 'db-restart-immediate':
            await world.cluster.restart('immediate');
            break;
          case 'kill-api': {
            const old = apiProcess;
            apiClient = null;
            apiProcess = null;
            await old?.kill();
            apiGeneration += 1;
            for (let tries = 0; apiProcess === null; tries++) {
              try {
                apiProcess = await world.startApi(`api-g${apiGeneration}`);
              } catch (error) {
                if (tries >= 10) throw error;
                await new Promise((resolve) => setTimeout(resolve, 500));
              }
            }
            apiClient = new ApiClient(apiProcess.apiUrl ?? '');
            break;
          }
          case 'receiver-500': {
            const path = pick(paths);
            const n = between(1, 3);
            detail = `${path} ×${n}`;
            await world.receiver.script(
              path,
              Array.from({ length: n }, () => ({ status: 500 })),
              { status: 200, delayMs: 20 },
            );
            break;
          }
          case 'arm-fault-point': {
            const point = pick(['after_send', 'after_claim', 'before_record']);
            const spec = `${point}@${between(1, 15)}:exit`;
            detail = `${live(slot).name} → ${spec}`;
            slot.nextFaultPoint = spec;
            await live(slot).stop();
            break;
          }
        }
        plan.push(`${step}:${fault}${detail === '' ? '' : `(${detail})`}:${Date.now() - t0}ms`);
        console.log(`fault-step seed=${SEED} ${plan.at(-1)}`);
      }
      const now = load.accepted;
      await load.waitFor(() => load.accepted >= now + 15, WAIT_MS, '15 more accepted after the last fault');
      await load.stop();
      await settled();

      const failWith = (what: string): string => `${what} (replay: TIDINGS_FAULT_SEED=${SEED}; plan ${plan.join(' ')})`;
      await world.receiver
        .waitFor((rs) => ledger.allSeen(rs), WAIT_MS, failWith('every acknowledged message delivered'))
        .catch(async (error: unknown) => {
          const rs = await world.receiver.requests();
          throw new Error(`${(error as Error).message}; missing: ${ledger.missing(rs).join(', ')}`);
        });
      await world.waitForRows<{ state: string; n: number }>(
        'SELECT state, count(*)::int AS n FROM deliveries WHERE app_id = $1 GROUP BY state',
        [appId],
        (rows) => rows.every((r) => r.state === 'succeeded'),
        WAIT_MS,
        failWith('every delivery settled as succeeded'),
      );
      assert.equal(await world.stuckLeases(), 0, failWith('no lease stuck'));
      const requests = (await world.receiver.requests()).filter((r) => paths.includes(r.path));
      const figures = ledger.figures(requests);
      assert.equal(figures.lost, 0, failWith('nothing lost'));
      assert.equal(figures.invalidSignatures, 0, failWith('zero invalid signatures'));
      const handedOver = await world.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM delivery_events e JOIN deliveries d ON d.id = e.delivery_id WHERE ' +
          `d.app_id = $1 AND e.reason IN ('reclaimed', 'released')`,
        [appId],
      );
      assert.ok(
        figures.duplicates <= (handedOver[0]?.n ?? 0),
        failWith(
          `duplicates (${figures.duplicates}) only where a lease was reclaimed or released (${handedOver[0]?.n})`,
        ),
      );
      const restarts = slots.reduce((n, s) => n + s.restarts, 0);
      printSummary('10 randomised mix', figures, started, {
        seed: SEED,
        steps: plan.join(' '),
        dispatcher_restarts: restarts,
        api_restarts: apiGeneration,
        reclaimed_or_released: handedOver[0]?.n ?? 0,
        unacknowledged_delivered: figures.unacknowledged,
      });
    },
  );
});
