import { cpus } from 'node:os';
import { machineCpu, procUsage, sleep } from './procs.ts';

/** Process ids per role (api, dispatcher, postgres, receiver, …); re-read about once a second. */
export type RolePids = () => Promise<Readonly<Record<string, readonly number[]>>>;

/** CPU and memory of each role over a measurement window. */
export interface UsageReport {
  readonly wallS: number;
  /** CPU seconds per role during the window. */
  readonly cpuS: Readonly<Record<string, number>>;
  /** Cores used per role (CPU seconds ÷ wall seconds). */
  readonly cores: Readonly<Record<string, number>>;
  /** Largest resident memory summed over each role's processes, bytes. */
  readonly rssPeakBytes: Readonly<Record<string, number>>;
  /** Busy cores of the whole machine (every process, other users' included), from /proc/stat. */
  readonly machineBusyCores: number;
  readonly machineCores: number;
}

/** A running monitor; `stop` ends the window. */
export interface Monitor {
  stop(): Promise<UsageReport>;
}

/**
 * Samples /proc every 100 ms for the pids of each role: first and last CPU time per pid and the peak of
 * the summed resident memory per role. A pid first seen after the window opened counts from its first
 * sample (new database backends, mostly; their earlier CPU is small).
 */
export function startMonitor(roles: RolePids): Monitor {
  const startedAt = performance.now();
  const machineStart = machineCpu();
  const first = new Map<number, { role: string; cpuS: number }>();
  const last = new Map<number, number>();
  const rssPeak: Record<string, number> = {};
  let current: Readonly<Record<string, readonly number[]>> = {};
  let running = true;
  let lastRoleRead = 0;

  const sample = (): void => {
    for (const [role, pids] of Object.entries(current)) {
      let rss = 0;
      for (const pid of pids) {
        const u = procUsage(pid);
        if (u === null) continue;
        if (!first.has(pid)) first.set(pid, { role, cpuS: u.cpuS });
        last.set(pid, u.cpuS);
        rss += u.rssBytes;
      }
      if (rss > (rssPeak[role] ?? 0)) rssPeak[role] = rss;
    }
  };

  const loop = (async () => {
    while (running) {
      if (performance.now() - lastRoleRead > 1_000) {
        lastRoleRead = performance.now();
        try {
          current = await roles();
        } catch {
          // keep the previous pids
        }
      }
      sample();
      await sleep(100);
    }
  })();

  return {
    async stop() {
      running = false;
      await loop;
      sample();
      const wallS = (performance.now() - startedAt) / 1000;
      const cpuS: Record<string, number> = {};
      for (const [pid, f] of first) cpuS[f.role] = (cpuS[f.role] ?? 0) + ((last.get(pid) ?? f.cpuS) - f.cpuS);
      const cores: Record<string, number> = {};
      for (const [role, s] of Object.entries(cpuS)) cores[role] = s / wallS;
      const machineEnd = machineCpu();
      const machineCores = cpus().length;
      const machineBusyCores =
        machineStart === null || machineEnd === null || machineEnd.total === machineStart.total
          ? Number.NaN
          : ((machineEnd.busy - machineStart.busy) / (machineEnd.total - machineStart.total)) * machineCores;
      return { wallS, cpuS, cores, rssPeakBytes: rssPeak, machineBusyCores, machineCores };
    },
  };
}
