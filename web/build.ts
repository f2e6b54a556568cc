import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Builds the web app (Vite, web/vite.config.ts) into web/dist/ when the bundle is missing or older than any
 * of its sources, so `npm start` and the browser tests serve a current bundle with no extra step.
 * `--force` builds always. Exit code 0 on success.
 */
const webDir = fileURLToPath(new URL('.', import.meta.url));
const SOURCES = ['src', 'console.html', 'app-portal.html', 'vite.config.ts', '../package-lock.json'];

async function newest(path: string): Promise<number> {
  const s = await stat(path);
  if (!s.isDirectory()) return s.mtimeMs;
  let max = s.mtimeMs;
  for (const entry of await readdir(path)) max = Math.max(max, await newest(join(path, entry)));
  return max;
}

async function isStale(): Promise<boolean> {
  let built: number;
  try {
    built = (await stat(join(webDir, 'dist', '.vite', 'manifest.json'))).mtimeMs;
  } catch {
    return true;
  }
  for (const source of SOURCES) if ((await newest(join(webDir, source))) > built) return true;
  return false;
}

if (process.argv.includes('--force') || (await isStale())) {
  const { build } = await import('vite');
  const started = Date.now();
  await build({ configFile: join(webDir, 'vite.config.ts') });
  console.log(`web UI built into web/dist/ in ${Date.now() - started} ms`);
}
