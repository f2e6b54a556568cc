/**
 * Cleanup that must run however the test process ends: normally, or on SIGINT / SIGTERM / SIGHUP (an
 * interrupted run, a runner's timeout). Fault tests start PostgreSQL clusters and Tidings processes that
 * would otherwise outlive the test.
 */

const hooks = new Set<() => void>();
let installed = false;

/**
 * Registers `hook` (synchronous: it runs inside the process's `exit` event) and returns a function that
 * unregisters it. On the first registration, SIGINT, SIGTERM and SIGHUP are made to exit the process
 * (code 128 + signal number) so that the hooks run.
 */
export function onProcessExit(hook: () => void): () => void {
  hooks.add(hook);
  if (!installed) {
    installed = true;
    process.on('exit', () => {
      for (const h of [...hooks]) {
        try {
          h();
        } catch {
          // the other hooks still run
        }
      }
    });
    for (const [signal, code] of [
      ['SIGINT', 130],
      ['SIGTERM', 143],
      ['SIGHUP', 129],
    ] as const) {
      process.once(signal, () => process.exit(code));
    }
  }
  return () => hooks.delete(hook);
}
