import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import helmet from '@fastify/helmet';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Config } from '../../config/config.ts';

/** Where `npm run build:web` (Vite, web/vite.config.ts) writes the bundle; git-ignored. */
export const WEB_DIST_DIR = fileURLToPath(new URL('../../../web/dist/', import.meta.url));

/** URL prefix of the built scripts and styles (Vite `base`). */
const ASSETS_PREFIX = '/ui/assets/';

/** The two modes of the web app: the page each serves, and who may frame it. */
const MODES = [
  { path: '/console', file: 'console.html', framing: 'console' },
  { path: '/app-portal', file: 'app-portal.html', framing: 'portal' },
] as const;

/** Answered while the bundle is missing: what to run. No script, no outside resource. */
const NOT_BUILT = `<!doctype html><html lang="en"><head><meta charset="utf-8">
<title>Tidings: web UI not built</title></head>
<body><main><h1>The web UI is not built</h1><p>Build it once with <code>npm run build:web</code> (the repository's
<code>npm start</code> and <code>npm test</code> build it on their own when it is missing or stale), then reload
this page.</p>
<p>The HTTP API works without it: see <a href="/api/v1/openapi.json">/api/v1/openapi.json</a>.</p>
</main></body></html>`;

/**
 * The Content-Security-Policy of a page (ADR 0012): scripts, styles and API calls from this origin only, no
 * inline script, no plugin, no `<base>`; `frameAncestors` names who may show the page in an iframe.
 */
function csp(frameAncestors: readonly string[], imgOrigins: readonly string[]) {
  return {
    useDefaults: false,
    directives: {
      defaultSrc: ["'self'"],
      scriptSrc: ["'self'"],
      styleSrc: ["'self'"],
      imgSrc: ["'self'", 'data:', ...imgOrigins],
      connectSrc: ["'self'"],
      fontSrc: ["'self'"],
      objectSrc: ["'none'"],
      baseUri: ["'none'"],
      formAction: ["'self'"],
      frameAncestors: frameAncestors.length === 0 ? ["'none'"] : [...frameAncestors],
    },
  };
}

async function sendPage(reply: FastifyReply, path: string): Promise<FastifyReply> {
  let html: string;
  try {
    html = await readFile(path, 'utf8');
  } catch {
    return reply.code(503).type('text/html; charset=utf-8').header('cache-control', 'no-store').send(NOT_BUILT);
  }
  return reply.type('text/html; charset=utf-8').header('cache-control', 'no-cache').send(html);
}

/**
 * Serves the web app (ADR 0012) from the API process, without authentication (the pages hold no data; every
 * datum comes from the public API with the user's Bearer token): the operator console at `/console`, the
 * application portal at `/app-portal` (framable by TIDINGS_PORTAL_FRAME_ANCESTORS only), and the hashed
 * bundle files under `/ui/assets/` (cached for a year). Security headers by @fastify/helmet on all three.
 * `distDir` (ending in `/`) is where the bundle is, web/dist/ by default.
 */
export function installWebUi(
  app: FastifyInstance,
  config: Pick<Config, 'portalFrameAncestors' | 'portalBrandLogoUrl'>,
  distDir: string = WEB_DIST_DIR,
): void {
  const logoOrigin = config.portalBrandLogoUrl === undefined ? [] : [new URL(config.portalBrandLogoUrl).origin];
  for (const mode of MODES) {
    app.register(async (scoped) => {
      const portal = mode.framing === 'portal';
      await scoped.register(helmet, {
        global: true,
        contentSecurityPolicy: csp(portal ? config.portalFrameAncestors : [], portal ? logoOrigin : []),
        // frame-ancestors decides; X-Frame-Options cannot name other origins.
        xFrameOptions: portal ? false : { action: 'deny' },
        referrerPolicy: { policy: 'no-referrer' },
      });
      // `/console/` too: the router ignores a trailing slash.
      scoped.get(mode.path, { config: { public: true }, schema: { hide: true } }, async (_request, reply) =>
        sendPage(reply, `${distDir}${mode.file}`),
      );
    });
  }
  app.register(async (scoped) => {
    await scoped.register(helmet, {
      global: true,
      contentSecurityPolicy: csp([], []),
      referrerPolicy: { policy: 'no-referrer' },
    });
    await scoped.register(fastifyStatic, { root: `${distDir}assets`, serve: false, index: false });
    // Public like the pages (the files hold no data), unlimited, and not in the OpenAPI document.
    scoped.get<{ Params: { '*': string } }>(
      `${ASSETS_PREFIX}*`,
      { config: { public: true }, schema: { hide: true } },
      async (request, reply) => reply.sendFile(request.params['*'], { immutable: true, maxAge: '365d' }),
    );
  });
}
