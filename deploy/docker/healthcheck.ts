/**
 * HEALTHCHECK of the Tidings image (deploy/docker/Dockerfile): exit 0 when `GET /livez` answers 200 on the API
 * port (PORT: api, serve) or on the admin port (TIDINGS_ADMIN_PORT: dispatcher), else 1. Each try waits at most
 * 2 s. Run by the image's Node.js: `node /app/deploy/docker/healthcheck.ts`.
 */

/** The /livez addresses to try, in order, from the container's environment (the defaults of the schema). */
export function livezUrls(env: Readonly<Record<string, string | undefined>>): string[] {
  const host =
    env.HOST === undefined || env.HOST === '' || env.HOST === '0.0.0.0' || env.HOST === '::' ? '127.0.0.1' : env.HOST;
  const name = host.includes(':') ? `[${host}]` : host;
  return [env.PORT || '8071', env.TIDINGS_ADMIN_PORT || '9464'].map((port) => `http://${name}:${port}/livez`);
}

/** Whether one of the addresses answers 200. */
export async function live(urls: readonly string[]): Promise<boolean> {
  for (const url of urls) {
    try {
      if ((await fetch(url, { signal: AbortSignal.timeout(2000) })).ok) return true;
    } catch {
      // Nothing listens there (the other role's port), or it timed out: try the next.
    }
  }
  return false;
}

if (import.meta.main) process.exit((await live(livezUrls(process.env))) ? 0 : 1);
