/**
 * The loop's timers (a seam: unit tests pass manual ones). `after` calls `fn` once after `ms` and returns a
 * function that cancels it; `weak` timers do not keep the process alive. `every` calls `fn` each `ms` (weak).
 */
export interface LoopTimers {
  after(ms: number, fn: () => void, weak?: boolean): () => void;
  every(ms: number, fn: () => void): () => void;
}

/** The process's timers. */
export const systemTimers: LoopTimers = {
  after(ms, fn, weak = false) {
    const timer = setTimeout(fn, ms);
    if (weak) timer.unref();
    return () => clearTimeout(timer);
  },
  every(ms, fn) {
    const timer = setInterval(fn, ms);
    timer.unref();
    return () => clearInterval(timer);
  },
};
