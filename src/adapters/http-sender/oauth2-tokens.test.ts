import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent } from 'undici';
import { createTokenCache, expiresInSeconds, type TokenCache } from './oauth2-tokens.ts';

/** A real token endpoint on 127.0.0.1 answering each request with `expires_in` = the next of `lifetimes`. */
async function tokenServer(expiresIn: unknown): Promise<{ server: Server; url: string; issued: () => number }> {
  let issued = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      issued += 1;
      res.setHeader('content-type', 'application/json');
      const body: Record<string, unknown> = { access_token: `t${issued}`, token_type: 'Bearer' };
      if (expiresIn !== undefined) body['expires_in'] = expiresIn;
      res.end(JSON.stringify(body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { server, url: `http://127.0.0.1:${port}/token`, issued: () => issued };
}

const DEFAULT_MS = 300_000;

async function withCache(
  expiresIn: unknown,
  run: (cache: TokenCache, url: string, issued: () => number, clock: { now: number }) => Promise<void>,
): Promise<void> {
  const { server, url, issued } = await tokenServer(expiresIn);
  const agent = new Agent();
  const clock = { now: 1_000_000 };
  const cache = createTokenCache({
    agent,
    deadlineMs: 5000,
    maxResponseBytes: 65_536,
    earlyRefreshMs: 30_000,
    defaultLifetimeMs: DEFAULT_MS,
    max: 10,
    userAgent: 'test',
    nowMs: () => clock.now,
  });
  try {
    await run(cache, url, issued, clock);
  } finally {
    await agent.close();
    await new Promise((resolve) => server.close(resolve));
  }
}

const grant = (tokenUrl: string) => ({ tokenUrl, clientId: 'c', clientSecret: 's', scope: null, audience: null });

for (const expiresIn of [0, -5, '0', '-1']) {
  test(`an expires_in of ${JSON.stringify(expiresIn)} is used for that attempt only, never kept`, async () => {
    await withCache(expiresIn, async (cache, url, issued) => {
      assert.equal((await cache.get('ep', grant(url))).value, 't1');
      assert.equal((await cache.get('ep', grant(url))).value, 't2', 'the next attempt fetches a new token');
      assert.equal(issued(), 2);
    });
  });
}

test('a numeric string expires_in ("3600") is that many seconds', async () => {
  await withCache('3600', async (cache, url, issued, clock) => {
    await cache.get('ep', grant(url));
    clock.now += 3_000_000; // 50 min: past the 5 min default, before 3600 s − the early refresh
    assert.equal((await cache.get('ep', grant(url))).value, 't1');
    clock.now += 600_000 - 30_000; // 3590 s: within the early refresh
    assert.equal((await cache.get('ep', grant(url))).value, 't2');
    assert.equal(issued(), 2);
  });
});

for (const expiresIn of [undefined, 'soon', null, true, '1e9']) {
  test(`an expires_in of ${String(JSON.stringify(expiresIn))} gets the default lifetime`, async () => {
    await withCache(expiresIn, async (cache, url, _issued, clock) => {
      await cache.get('ep', grant(url));
      clock.now += DEFAULT_MS - 30_001;
      assert.equal((await cache.get('ep', grant(url))).value, 't1');
      clock.now += 2;
      assert.equal((await cache.get('ep', grant(url))).value, 't2');
    });
  });
}

test('expiresInSeconds: numbers and decimal strings only', () => {
  assert.equal(expiresInSeconds(60), 60);
  assert.equal(expiresInSeconds(' 60 '), 60);
  assert.equal(expiresInSeconds('-1'), -1);
  assert.equal(expiresInSeconds(Number.NaN), null);
  assert.equal(expiresInSeconds(''), null);
  assert.equal(expiresInSeconds('0x10'), null);
});
