import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import type { Response } from 'playwright-core';
import { ARTIFACTS, startReceiver, startWorld, type Receiver, type World } from './harness.ts';

let world: World;
let receiver: Receiver;
let host: Server;
let hostOrigin = '';
const a = { app: '', ep: '', msg: '', portal: '', token: '' };
const b = { app: '', ep: '', msg: '' };

/**
 * The customer's own product, on another origin (localhost vs 127.0.0.1, another port): a page with the portal in an
 * iframe.
 */
async function startHost(): Promise<void> {
  host = createServer((req, res) => {
    const src = new URL(req.url ?? '/', 'http://x').searchParams.get('portal') ?? '';
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(
      `<!doctype html><html lang="en"><head><title>Customer product</title></head><body><h1>Our ` +
        `product</h1><iframe title="Webhooks" src="${src.replaceAll('"', '&quot;')}" width="1200" ` +
        `height="700"></iframe></body></html>`,
    );
  });
  await new Promise<void>((r) => host.listen(0, '127.0.0.1', r));
  hostOrigin = `http://localhost:${(host.address() as AddressInfo).port}`;
}

before(async () => {
  await startHost();
  world = await startWorld({
    TIDINGS_PORTAL_FRAME_ANCESTORS: hostOrigin,
    TIDINGS_PORTAL_BRAND_NAME: 'Acme Webhooks',
    TIDINGS_PORTAL_BRAND_ACCENT: '#0f6e3f',
  });
  receiver = await startReceiver();
  for (const [side, name] of [
    [a, 'Tenant A'],
    [b, 'Tenant B'],
  ] as const) {
    side.app = (await world.api<{ id: string }>('POST', '/api/v1/app', { name })).body.id;
    side.ep = (
      await world.api<{ id: string }>('POST', `/api/v1/app/${side.app}/endpoint`, {
        url: `${receiver.url}/${name.replace(' ', '-')}`,
      })
    ).body.id;
    side.msg = (
      await world.api<{ id: string }>('POST', `/api/v1/app/${side.app}/msg`, {
        eventType: 'thing.done',
        payload: { owner: name },
      })
    ).body.id;
  }
  const access = await world.api<{ url: string; token: string }>('POST', `/api/v1/auth/app-portal-access/${a.app}`, {});
  a.portal = access.body.url;
  a.token = access.body.token;
});

after(async () => {
  await receiver?.close();
  await world?.stop();
  await new Promise((r) => host?.close(r));
});

test('the portal link opened inside an iframe of another origin works, and no cookie is set at any point', async () => {
  const { context, page } = await world.page();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  try {
    await page.goto(`${hostOrigin}/?portal=${encodeURIComponent(a.portal)}`);
    const frame = page.frameLocator('iframe');
    await frame.getByRole('heading', { name: 'Endpoints', level: 1 }).waitFor();
    await frame.getByText(`${receiver.url}/Tenant-A`).waitFor();
    assert.equal(await frame.locator('.brand').textContent(), 'Acme Webhooks');
    // An action works inside the frame: send-example needs an event type, so look at the message log.
    await frame.getByRole('link', { name: 'Messages' }).click();
    await frame.getByRole('link', { name: 'thing.done' }).waitFor();
    assert.deepEqual(await context.cookies(), []);
    const portalFrame = page.frames().find((f) => f.url().startsWith(world.url))!;
    assert.equal(await portalFrame.evaluate(() => document.cookie), '');
    assert.ok(!portalFrame.url().includes(a.token), 'the token left the URL after load');
    // Never in localStorage (this tab's sessionStorage may keep it where a frame is allowed storage:
    // test/browser/portal-session.test.ts; Chromium refuses storage to this third-party frame).
    const stored = await portalFrame.evaluate(() => {
      try {
        return JSON.stringify({ ...localStorage });
      } catch {
        return 'storage refused to a third-party frame';
      }
    });
    assert.ok(!stored.includes(a.token), 'the token is not in localStorage');
    await page.screenshot({ path: `${ARTIFACTS}portal-in-iframe.png` });
    assert.deepEqual(errors, []);
  } finally {
    await context.close();
  }
  assert.ok(!world.logs.text().includes(a.token), 'the portal token is not in the server log');
});

test('the console cannot be framed by another origin', async () => {
  const { context, page } = await world.page();
  try {
    const refused = page.waitForEvent('console', (m) => /frame-ancestors|Refused to (display|frame)/i.test(m.text()));
    await page.goto(`${hostOrigin}/?portal=${encodeURIComponent(`${world.url}/console`)}`);
    await refused;
    const framed = page.frames().find((f) => f.url().startsWith(`${world.url}/console`));
    assert.equal((await framed?.locator('#root').count()) ?? 0, 0);
  } finally {
    await context.close();
  }
});

test("a portal for application A cannot show or fetch B's objects (asserted on the network responses)", async () => {
  const { context, page } = await world.page();
  const responses: Response[] = [];
  page.on('response', (r) => {
    if (r.url().includes('/api/v1/')) responses.push(r);
  });
  try {
    await page.goto(a.portal);
    await page.getByText(`${receiver.url}/Tenant-A`).waitFor();
    for (const route of [`/endpoints/${b.ep}`, `/messages/${b.msg}`, `/messages/${b.msg}/endpoints/${b.ep}`]) {
      await page.evaluate((r) => {
        location.hash = r;
      }, route);
      await page.locator('.error').first().waitFor();
      assert.match((await page.locator('.error').first().textContent()) ?? '', /404/);
    }
    // Straight calls with A's token, from inside the page, naming B.
    const direct = await page.evaluate(
      async ({ token, app, ep, msg }) => {
        const paths = [
          `/api/v1/app/${app}`,
          `/api/v1/app/${app}/endpoint`,
          `/api/v1/app/${app}/endpoint/${ep}`,
          `/api/v1/app/${app}/msg/${msg}`,
          `/api/v1/app/${app}/endpoint/${ep}/secret`,
        ];
        return Promise.all(
          paths.map(async (p) => (await fetch(p, { headers: { authorization: `Bearer ${token}` } })).status),
        );
      },
      { token: a.token, ...b },
    );
    for (const status of direct) assert.ok(status === 404 || status === 403, `B's object answered ${status}`);
    // Opened first-party too, the portal sets no cookie.
    assert.deepEqual(await context.cookies(), []);
    const namingB = responses.filter(
      (r) => r.url().includes(b.app) || r.url().includes(b.ep) || r.url().includes(b.msg),
    );
    assert.ok(namingB.length >= 3);
    for (const r of namingB) assert.equal(r.status(), 404, r.url());
    for (const r of responses.filter((x) => x.ok())) {
      const text = await r.text().catch(() => '');
      for (const secret of [b.app, b.ep, b.msg, 'Tenant B', 'Tenant-B'])
        assert.ok(!text.includes(secret), `${r.url()} leaked ${secret}`);
    }
  } finally {
    await context.close();
  }
});

test('a read-only portal token shows no write controls, and the server refuses its writes', async () => {
  const access = await world.api<{ url: string; token: string }>('POST', `/api/v1/auth/app-portal-access/${a.app}`, {
    readOnly: true,
  });
  const { context, page } = await world.page();
  try {
    await page.goto(access.body.url);
    await page.getByText(`${receiver.url}/Tenant-A`).waitFor();
    await page.getByText('Read-only access').waitFor();
    assert.equal(await page.getByRole('form', { name: 'Add an endpoint' }).count(), 0);
    await page.evaluate((r) => {
      location.hash = r;
    }, `/endpoints/${a.ep}`);
    await page.getByRole('heading', { name: 'Health' }).waitFor();
    await page.screenshot({ path: `${ARTIFACTS}portal-read-only-endpoint-light.png`, fullPage: true });
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.screenshot({ path: `${ARTIFACTS}portal-read-only-endpoint-dark.png`, fullPage: true });
    await page.emulateMedia({ colorScheme: 'light' });
    for (const name of [
      'Pause',
      'Disable',
      'Reveal secret',
      'Rotate secret',
      'Save settings',
      'Send test event',
      'Set header',
    ])
      assert.equal(await page.getByRole('button', { name }).count(), 0, name);
    const status = await page.evaluate(
      async ({ token, app, ep }) =>
        (
          await fetch(`/api/v1/app/${app}/endpoint/${ep}/pause`, {
            method: 'POST',
            headers: { authorization: `Bearer ${token}` },
          })
        ).status,
      { token: access.body.token, app: a.app, ep: a.ep },
    );
    assert.equal(status, 403);
  } finally {
    await context.close();
  }
});
