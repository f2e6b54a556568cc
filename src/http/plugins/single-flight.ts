/**
 * Wraps `render` so that calls made while one is in progress share its result instead of starting their
 * own: a flood of requests for one expensive public answer (the Prometheus text of `/metrics`) builds it
 * once per round, not once per request. A failed render is not kept; the next call starts a new one.
 */
export function singleFlight<T>(render: () => Promise<T>): () => Promise<T> {
  let running: Promise<T> | null = null;
  return () => {
    running ??= render().finally(() => {
      running = null;
    });
    return running;
  };
}
