import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import Fastify from 'fastify';
import { installWebUi } from './web-ui.ts';

const config = {
  portalFrameAncestors: ['https://app.example.com'],
  portalBrandLogoUrl: 'https://cdn.example.com/logo.png',
};

async function serve(dist: string) {
  const app = Fastify({ routerOptions: { ignoreTrailingSlash: true } });
  installWebUi(app, config, dist);
  await app.ready();
  return app;
}

test('without a built bundle the pages answer 503 saying to run npm run build:web', async () => {
  const app = await serve(join(tmpdir(), 'tidings-no-such-dist/'));
  for (const url of ['/console', '/app-portal', '/console/']) {
    const r = await app.inject({ url });
    assert.equal(r.statusCode, 503, url);
    assert.match(r.body, /npm run build:web/);
    assert.doesNotMatch(r.body, /<script/i);
  }
  await app.close();
});

test(
  'the pages carry a CSP without inline scripts; only the portal ' + 'may be framed, by the configured origins',
  async () => {
    const dist = await mkdtemp(join(tmpdir(), 'tidings-dist-'));
    await mkdir(join(dist, 'assets'));
    await writeFile(join(dist, 'console.html'), '<!doctype html><script type="module" src="/ui/assets/c.js"></script>');
    await writeFile(
      join(dist, 'app-portal.html'),
      '<!doctype html><script type="module" src="/ui/assets/p.js"></script>',
    );
    await writeFile(join(dist, 'assets', 'c.js'), 'console.log(1)');
    const app = await serve(`${dist}/`);
    try {
      const consolePage = await app.inject({ url: '/console' });
      assert.equal(consolePage.statusCode, 200);
      const consoleCsp = String(consolePage.headers['content-security-policy']);
      assert.match(consoleCsp, /script-src 'self'(;|$)/);
      assert.doesNotMatch(consoleCsp, /unsafe-inline|unsafe-eval/);
      assert.match(consoleCsp, /frame-ancestors 'none'/);
      assert.equal(consolePage.headers['x-frame-options'], 'DENY');
      assert.equal(consolePage.headers['x-content-type-options'], 'nosniff');
      assert.equal(consolePage.headers['referrer-policy'], 'no-referrer');
      const portal = await app.inject({ url: '/app-portal' });
      const portalCsp = String(portal.headers['content-security-policy']);
      assert.match(portalCsp, /frame-ancestors https:\/\/app\.example\.com/);
      assert.match(portalCsp, /img-src 'self' data: https:\/\/cdn\.example\.com/);
      assert.equal(portal.headers['x-frame-options'], undefined);
      const asset = await app.inject({ url: '/ui/assets/c.js' });
      assert.equal(asset.statusCode, 200);
      assert.match(String(asset.headers['cache-control']), /immutable/);
      assert.equal((await app.inject({ url: '/ui/assets/missing.js' })).statusCode, 404);
      for (const url of ['/ui/assets/..%2fconsole.html', '/ui/assets/%2e%2e/console.html'])
        assert.notEqual((await app.inject({ url })).statusCode, 200, url);
    } finally {
      await app.close();
      await rm(dist, { recursive: true, force: true });
    }
  },
);
