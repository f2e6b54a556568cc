import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const here = (path: string): string => fileURLToPath(new URL(path, import.meta.url));

/**
 * The web app's build (ADR 0012): two entry pages (console, app-portal) sharing one code base, Preact's JSX
 * runtime, hashed files under /ui/assets/ (served by the API process, src/http/plugins/web-ui.ts), no module
 * preload polyfill (it would be an inline script), and a manifest the bundle-size test reads.
 */
export default defineConfig({
  root: here('.'),
  base: '/ui/',
  logLevel: 'warn',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: here('dist'),
    emptyOutDir: true,
    manifest: true,
    target: 'es2022',
    modulePreload: { polyfill: false },
    reportCompressedSize: false,
    rollupOptions: { input: { console: here('console.html'), 'app-portal': here('app-portal.html') } },
  },
});
