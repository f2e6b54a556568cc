import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Page, Response } from 'playwright-core';
import { startReceiver, startWorld, type Receiver, type World } from './harness.ts';

let world: World;
let receiver: Receiver;
const a = { app: '', ep: '', msg: '' };
const b = { app: '', ep: '' };

before(async () => {
  world = await startWorld();
  receiver = await startReceiver();
  a.app = (await world.api<{ id: string }>('POST', '/api/v1/app', { name: 'Session A' })).body.id;
  b.app = (await world.api<{ id: string }>('POST', '/api/v1/app', { name: 'Session B' })).body.id;
  a.ep = (
    await world.api<{ id: string }>('POST', `/api/v1/app/${a.app}/endpoint`, { url: `${receiver.url}/session-a` })
  ).body.id;
  b.ep = (
    await world.api<{ id: string }>('POST', `/api/v1/app/${b.app}/endpoint`, { url: `${receiver.url}/session-b` })
  ).body.id;
  a.msg = (
    await world.api<{ id: string }>('POST', `/api/v1/app/${a.app}/msg`, {
      eventType: 'session.tested',
      payload: { n: 1 },
    })
  ).body.id;
});

after(async () => {
  await receiver?.close();
  await world?.stop();
});

const link = async (app: string, expiry = 3600): Promise<{ url: string; token: string }> =>
  (await world.api<{ url: string; token: string }>('POST', `/api/v1/auth/app-portal-access/${app}`, { expiry })).body;

/** localStorage, sessionStorage and cookies of the page, as text. */
const stores = (page: Page): Promise<{ local: string; session: string; cookie: string }> =>
  page.evaluate(() => ({
    local: JSON.stringify({ ...localStorage }),
    session: JSON.stringify({ ...sessionStorage }),
    cookie: document.cookie,
  }));

test(
  'a new portal link opened in a tab already on the portal replaces the key (the other application is shown) and ' +
    'leaves the address bar at once',
  async () => {
    const first = await link(a.app);
    const second = await link(b.app);
    const { context, page } = await world.page();
    try {
      await page.goto(first.url);
      await page.getByText(`${receiver.url}/session-a`).waitFor();
      // Same document, another fragment: the browser fires hashchange and does not reload.
      await page.goto(second.url);
      await page.getByText(`${receiver.url}/session-b`).waitFor({ timeout: 10_000 });
      assert.equal(await page.getByText(`${receiver.url}/session-a`).count(), 0);
      assert.ok(!page.url().includes(second.token), 'the new key left the address bar');
      assert.ok(page.url().endsWith('#/endpoints'));
      const s = await stores(page);
      assert.ok(s.session.includes(second.token) && !s.session.includes(first.token), 'the tab keeps the new key only');
    } finally {
      await context.close();
    }
  },
);

test(
  "a reload keeps the customer signed in, from this tab's sessionStorage only (never localStorage or a cookie), " +
    'until the token expires or the customer signs out',
  async () => {
    const access = await link(a.app);
    const { context, page } = await world.page();
    try {
      await page.goto(access.url);
      await page.getByText(`${receiver.url}/session-a`).waitFor();
      await page.evaluate((r) => {
        location.hash = r;
      }, `/endpoints/${a.ep}`);
      await page.getByRole('heading', { name: 'Health' }).waitFor();
      await page.reload();
      await page.getByRole('heading', { name: 'Health' }).waitFor({ timeout: 10_000 });
      let s = await stores(page);
      assert.ok(s.session.includes(access.token));
      assert.ok(!s.local.includes(access.token), 'not in localStorage');
      assert.equal(s.cookie, '');
      assert.deepEqual(await context.cookies(), []);
      // Another tab of the same browser does not inherit it.
      const other = await context.newPage();
      await other.goto(`${world.url}/app-portal`);
      await other.getByText('Open this page with the link you were given').waitFor();
      await other.close();
      // Past the token's expiry the stored key is dropped, not used.
      await page.evaluate(() => {
        const k = 'tidings-portal-session';
        const v = JSON.parse(sessionStorage.getItem(k)!) as { token: string };
        sessionStorage.setItem(k, JSON.stringify({ ...v, expiresAt: new Date(Date.now() - 1000).toISOString() }));
      });
      await page.reload();
      await page.getByText('Open this page with the link you were given').waitFor();
      s = await stores(page);
      assert.ok(!s.session.includes(access.token), 'an expired key is removed');
      // Signing out drops it and ends the token on the server too.
      await page.goto(access.url);
      await page.getByText(`${receiver.url}/session-a`).waitFor();
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByText('Open this page with the link you were given').waitFor();
      s = await stores(page);
      assert.ok(!s.session.includes(access.token));
      await page.reload();
      await page.getByText('Open this page with the link you were given').waitFor();
      assert.equal((await world.api('GET', '/api/v1/auth/me', undefined, access.token)).status, 401);
    } finally {
      await context.close();
    }
  },
);

test(
  'the portal shows no dispatcher id (a host name) or fencing token, and the API gives none to a portal or ' +
    'application token; the console still shows them',
  async () => {
    const timelinePath = `/api/v1/app/${a.app}/msg/${a.msg}/endpoint/${a.ep}/timeline`;
    let admin = await world.api<{
      deliveryState: string;
      data: { dispatcherId: string | null; fencingToken: string | null }[];
    }>('GET', timelinePath);
    for (let i = 0; i < 100 && admin.body.deliveryState !== 'succeeded'; i++) {
      await new Promise((r) => setTimeout(r, 50));
      admin = await world.api('GET', timelinePath);
    }
    const claimed = admin.body.data.find((e) => e.dispatcherId !== null);
    assert.ok(
      claimed !== undefined && claimed.fencingToken !== null,
      'the operator sees the dispatcher and the fencing token',
    );
    const appKey = (await world.api<{ token: string }>('POST', '/api/v1/api-key', { name: 'service', appId: a.app }))
      .body.token;
    const asApp = await world.api<{ data: { dispatcherId: string | null; fencingToken: string | null }[] }>(
      'GET',
      timelinePath,
      undefined,
      appKey,
    );
    assert.equal(asApp.status, 200);
    assert.ok(
      asApp.body.data.every((e) => e.dispatcherId === null && e.fencingToken === null),
      'an application key sees neither',
    );
    const access = await link(a.app);
    const { context, page } = await world.page();
    const bodies: string[] = [];
    page.on('response', (r: Response) => {
      if (r.url().includes('/timeline'))
        void r.text().then(
          (t) => bodies.push(t),
          () => undefined,
        );
    });
    try {
      await page.goto(access.url);
      await page.getByText(`${receiver.url}/session-a`).waitFor();
      await page.evaluate((r) => {
        location.hash = r;
      }, `/messages/${a.msg}/endpoints/${a.ep}`);
      await page.locator('.timeline .badge', { hasText: 'succeeded' }).waitFor({ timeout: 10_000 });
      const headings = await page.locator('.timeline th').allTextContents();
      assert.ok(!headings.some((h) => /dispatcher|fencing/i.test(h)), headings.join(', '));
      const main = (await page.locator('main').textContent()) ?? '';
      assert.ok(!main.includes(claimed.dispatcherId!), 'the dispatcher id is not on the page');
      assert.equal(await page.locator('code.dispatcher, code.fencing').count(), 0);
      await page.waitForFunction(() => document.querySelectorAll('.loading').length === 0);
      assert.ok(bodies.length > 0);
      for (const body of bodies)
        assert.ok(!body.includes(claimed.dispatcherId!), 'no timeline answer to the portal names the dispatcher');
    } finally {
      await context.close();
    }
  },
);
