import { fileURLToPath } from 'node:url';
import { procUsage, sleep, startChild } from './procs.ts';
import type { RawHttpInit, RawHttpResult } from './raw-http-process.ts';

const SCRIPT = fileURLToPath(new URL('./raw-http-process.ts', import.meta.url));

/** What one raw-HTTP reference run measured. Rates per second, memory in bytes, CPU in seconds. */
export interface RawHttpRun {
  readonly init: Omit<RawHttpInit, 'body'> & { readonly bodyBytes: number };
  readonly result: RawHttpResult;
  /** Answered requests per second over the run (burst mode). */
  readonly requestsPerS: number;
  /** Resident memory before the workload and at its peak. */
  readonly rssIdleBytes: number;
  readonly rssPeakBytes: number;
  /** CPU seconds the sender used during the workload. */
  readonly cpuS: number;
  /** CPU seconds the receiver used meanwhile (when its pid was given), else null. */
  readonly receiverCpuS: number | null;
}

/**
 * Runs the raw-HTTP reference in a child process (raw-http-process.ts) and samples its memory every
 * 50 ms; with `receiverPid`, also the receiver's CPU time over the workload. Bounded by `init.timeoutMs` plus 10 s for
 * start and stop.
 * @throws Error when the child exits without a result
 */
export async function runRawHttp(init: RawHttpInit, logFile?: string, receiverPid?: number): Promise<RawHttpRun> {
  const child = startChild({
    name: 'raw-http',
    args: [SCRIPT, JSON.stringify(init)],
    env: { PATH: process.env.PATH },
    ipc: true,
    ...(logFile === undefined ? {} : { logFile }),
  });
  try {
    let ready: () => void = () => undefined;
    const isReady = new Promise<void>((resolve) => {
      ready = resolve;
    });
    const result = new Promise<RawHttpResult>((resolve, reject) => {
      child.process.on('message', (m: RawHttpResult | { type: 'ready' }) =>
        m.type === 'ready' ? ready() : resolve(m),
      );
      void child.exited.then((code) =>
        reject(
          new Error(
            `raw-http reference exited (${code}) without a result${logFile === undefined ? '' : `; see ${logFile}`}`,
          ),
        ),
      );
    });
    // Bounds that must not keep the benchmark alive once it is done: unref'd timers.
    const bound = (ms: number): Promise<void> =>
      new Promise((resolve) => {
        setTimeout(resolve, ms).unref();
      });
    await Promise.race([isReady, result, bound(30_000)]); // modules loaded: now its memory is the idle baseline
    const idle = procUsage(child.pid);
    let peak = idle?.rssBytes ?? 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const u = procUsage(child.pid);
        if (u !== null && u.rssBytes > peak) peak = u.rssBytes;
        await sleep(50);
      }
    })();
    const receiverStart = receiverPid === undefined ? null : procUsage(receiverPid);
    child.process.send('go');
    const timeout = bound(init.timeoutMs + 10_000).then(() => {
      throw new Error('raw-http reference did not finish in time');
    });
    const r = await Promise.race([result, timeout]);
    const end = procUsage(child.pid);
    const receiverEnd = receiverPid === undefined ? null : procUsage(receiverPid);
    sampling = false;
    await sampler;
    const { body, ...rest } = init;
    const elapsedS = Math.max(1e-6, (r.endedAt - r.startedAt) / 1000);
    return {
      init: { ...rest, bodyBytes: Buffer.byteLength(body) },
      result: r,
      requestsPerS: r.ok / elapsedS,
      rssIdleBytes: idle?.rssBytes ?? 0,
      rssPeakBytes: peak,
      cpuS: (end?.cpuS ?? 0) - (idle?.cpuS ?? 0),
      receiverCpuS: receiverStart === null || receiverEnd === null ? null : receiverEnd.cpuS - receiverStart.cpuS,
    };
  } finally {
    if (child.process.connected) child.process.disconnect();
    await child.stop(3_000);
  }
}
