import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Page } from 'playwright-core';
import { ARTIFACTS, signIn, startReceiver, startWorld, type Receiver, type World } from './harness.ts';

let world: World;
let receiver: Receiver;

before(async () => {
  world = await startWorld();
  receiver = await startReceiver();
});

after(async () => {
  await receiver?.close();
  await world?.stop();
});

/** Marks the document, so that a test can tell that the page was never reloaded. */
const mark = (page: Page): Promise<void> =>
  page.evaluate(() => {
    (window as unknown as { marker: number }).marker = 42;
  });
const marked = (page: Page): Promise<boolean> =>
  page.evaluate(() => (window as unknown as { marker?: number }).marker === 42);

test(
  'signed in with the admin token: create an application and an endpoint, publish, and the attempt and the ' +
    'timeline (dispatcher id, fencing token) appear without a reload',
  async () => {
    const { context, page } = await world.page();
    try {
      await signIn(page, world.url, world.token);
      await mark(page);
      await page.getByRole('link', { name: 'Applications' }).first().click();
      await page.getByText('No applications yet.').waitFor();
      await page.getByLabel('Name', { exact: true }).fill('Flow Co');
      await page.getByLabel('Uid (optional, your own id for it)').fill('flow');
      await page.getByRole('button', { name: 'Create application' }).click();
      await page.getByRole('heading', { name: 'Endpoints', level: 1 }).waitFor();
      await page.getByLabel('URL').fill(`${receiver.url}/flow`);
      await page.getByRole('button', { name: 'Add endpoint' }).click();
      await page.getByRole('heading', { name: `${receiver.url}/flow`, level: 1 }).waitFor();
      await page.getByRole('link', { name: 'Messages' }).click();
      await page.getByLabel('Event type', { exact: true }).first().waitFor();
      await page.getByRole('form', { name: 'Publish a message' }).getByLabel('Event type').fill('order.created');
      await page.getByLabel('Payload (JSON)').fill('{"order": 17, "big": 12345678901234567890}');
      // The receiver holds its answer until the message page is shown, so the attempt can only appear live.
      let release = (): void => undefined;
      receiver.gate = new Promise<void>((r) => {
        release = r;
      });
      await page.getByRole('button', { name: 'Publish' }).click();
      await page.getByRole('heading', { name: 'order.created', level: 1 }).waitFor();
      await page.getByText('No attempts yet.').waitFor();
      release();
      receiver.gate = null;
      // The exact bytes survive (a big integer is not rounded).
      await page.getByLabel('Exact bytes as delivered').check();
      assert.equal(await page.getByLabel('Payload text').textContent(), '{"order": 17, "big": 12345678901234567890}');
      // The attempt appears by itself (the page polls the API).
      await page.locator('section', { hasText: 'Attempts' }).getByText('success').first().waitFor({ timeout: 15_000 });
      await page.getByRole('link', { name: 'Open timeline' }).click();
      await page.getByRole('heading', { name: 'Delivery timeline' }).waitFor();
      await page.locator('.timeline .badge', { hasText: 'succeeded' }).waitFor({ timeout: 15_000 });
      const dispatcher = (await page.locator('code.dispatcher').first().textContent()) ?? '';
      const fencing = (await page.locator('code.fencing').first().textContent()) ?? '';
      // What the page shows is what the API recorded for this delivery.
      const [, app, msg, ep] = /#\/apps\/([^/]+)\/messages\/([^/]+)\/endpoints\/([^/]+)$/.exec(page.url()) ?? [];
      const timeline = await world.api<{ data: { dispatcherId: string | null; fencingToken: string | null }[] }>(
        'GET',
        `/api/v1/app/${app}/msg/${msg}/endpoint/${ep}/timeline`,
      );
      const claimed = timeline.body.data.find((e) => e.dispatcherId !== null)!;
      assert.equal(dispatcher, claimed.dispatcherId);
      assert.equal(fencing, claimed.fencingToken);
      assert.match(fencing, /^\d+$/);
      assert.equal(receiver.requests.filter((r) => r.path === '/flow').length, 1);
      assert.ok(await marked(page), 'the page was not reloaded');
      await page.screenshot({ path: `${ARTIFACTS}flow-timeline.png`, fullPage: true });
    } finally {
      await context.close();
    }
  },
);

/** Presses Tab until the focused element matches `selector` (at most 80 times); fails otherwise. */
async function tabTo(page: Page, selector: string, shift = false): Promise<void> {
  for (let i = 0; i < 80; i++) {
    await page.keyboard.press(shift ? 'Shift+Tab' : 'Tab');
    if (await page.evaluate((s) => document.activeElement?.matches(s) === true, selector)) {
      // Focus is visible: the focused element has an outline.
      const outline = await page.evaluate(() => getComputedStyle(document.activeElement!).outlineStyle);
      assert.notEqual(outline, 'none', `focus on ${selector} is visible`);
      return;
    }
  }
  assert.fail(`Tab never reached ${selector}`);
}

test('the main operator flow is done with the keyboard only, with visible focus', async () => {
  const { context, page } = await world.page();
  try {
    await page.goto(`${world.url}/console`);
    await page.getByLabel('API token').waitFor();
    // The token field has focus on load.
    await page.keyboard.type(world.token);
    await page.keyboard.press('Enter');
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    await tabTo(page, 'nav[aria-label="Main"] a[href="#/apps"]');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Applications', level: 1 }).waitFor();
    await tabTo(page, 'form[aria-label="Create an application"] input[name="name"]');
    await page.keyboard.type('Keys Co');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Endpoints', level: 1 }).waitFor();
    await tabTo(page, 'input[name="url"]');
    await page.keyboard.type(`${receiver.url}/keys`);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: `${receiver.url}/keys`, level: 1 }).waitFor();
    await tabTo(page, 'nav[aria-label="Application"] a[href$="/messages"]');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Messages', level: 1 }).waitFor();
    await tabTo(page, 'form[aria-label="Publish a message"] input[name="eventType"]');
    await page.keyboard.type('keys.pressed');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'keys.pressed', level: 1 }).waitFor();
    await page.getByRole('link', { name: 'Open timeline' }).waitFor();
    await tabTo(page, 'a[href*="/endpoints/"]:not([aria-label])');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Delivery timeline' }).waitFor();
    await page.locator('.timeline .badge', { hasText: 'succeeded' }).waitFor({ timeout: 15_000 });
    await tabTo(page, 'main .toolbar .action:first-child button');
    await page.keyboard.press('Enter');
    await page.getByText('Resent: one manual attempt was queued.').waitFor();
    await page.locator('.attempt', { hasText: '(manual)' }).waitFor({ timeout: 15_000 });
  } finally {
    await context.close();
  }
});

test(
  'a receiver body of <img src=x onerror=alert(1)> and a payload holding </script> are shown as text: no dialog, ' +
    'no script runs',
  async () => {
    const app = (await world.api<{ id: string }>('POST', '/api/v1/app', { name: 'Hostile' })).body.id;
    const ep = (
      await world.api<{ id: string }>('POST', `/api/v1/app/${app}/endpoint`, { url: `${receiver.url}/hostile` })
    ).body.id;
    receiver.answer = {
      status: 200,
      body: '<img src=x onerror=alert(1)><script>alert(2)</script>',
      contentType: 'text/html',
    };
    const payload = { note: '</script><script>alert(3)</script><img src=y onerror=alert(4)>' };
    const msg = (
      await world.api<{ id: string }>('POST', `/api/v1/app/${app}/msg`, { eventType: 'evil.thing', payload })
    ).body.id;
    const { context, page } = await world.page();
    const dialogs: string[] = [];
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    try {
      await signIn(page, world.url, world.token, `/apps/${app}/messages/${msg}/endpoints/${ep}`);
      const response = page.getByLabel('Response of attempt 1');
      await response.waitFor({ timeout: 15_000 });
      assert.equal(await response.textContent(), '<img src=x onerror=alert(1)><script>alert(2)</script>');
      await page.goto(`${world.url}/console#/apps/${app}/messages/${msg}`);
      await page.getByLabel('Payload text').waitFor();
      assert.match(
        (await page.getByLabel('Payload text').textContent()) ?? '',
        /<\/script><script>alert\(3\)<\/script><img src=y onerror=alert\(4\)>/,
      );
      assert.equal(await page.locator('main img').count(), 0, 'no image element was made from the text');
      assert.equal(await page.locator('main script').count(), 0, 'no script element was made from the text');
      assert.deepEqual(dialogs, []);
    } finally {
      receiver.answer = { status: 204, body: '', contentType: 'text/plain' };
      await context.close();
    }
  },
);

test('no token appears in the server log, and the settings page masks the admin token', async () => {
  const settings = await world.api<{ data: { env: string; value: string | null }[] }>('GET', '/api/v1/settings');
  assert.equal(settings.status, 200);
  assert.equal(settings.body.data.find((s) => s.env === 'TIDINGS_API_TOKEN')?.value, '••••••••');
  assert.ok(!JSON.stringify(settings.body).includes(world.token));
  assert.ok(!world.logs.text().includes(world.token), 'the admin token is not logged');
});

test(
  'the pager: Previous is disabled on the first page, Next and Previous walk the pages, and Previous returns to ' +
    'the page it came from',
  async () => {
    const app = await world.api<{ id: string }>('POST', '/api/v1/app', { name: 'Paging Co' });
    assert.equal(app.status, 201);
    // 30 messages: two pages of 25 on the messages page.
    for (let i = 0; i < 30; i += 1) {
      const r = await world.api('POST', `/api/v1/app/${app.body.id}/msg`, { eventType: 'paging.test', payload: { i } });
      assert.equal(r.status, 202);
    }
    const { context, page } = await world.page();
    try {
      await signIn(page, world.url, world.token);
      await page.evaluate((r) => {
        location.hash = r;
      }, `/apps/${app.body.id}/messages`);
      const previous = page.getByRole('button', { name: '← Previous' });
      const next = page.getByRole('button', { name: 'Next →' });
      // The id cell of the first row (the time cell changes as time passes).
      const firstRow = page.locator('main table tbody tr td:nth-child(2)').first();
      await next.waitFor();
      // The first page is shown whole (its 25 rows) before the pager is read.
      await page.waitForFunction(
        () =>
          document.querySelectorAll('.loading').length === 0 &&
          document.querySelectorAll('main table tbody tr').length === 25,
      );
      const firstPageTop = await firstRow.textContent();
      assert.equal(await previous.isDisabled(), true, 'Previous on the first page');
      assert.equal(await next.isDisabled(), false);
      await next.click();
      await page.waitForFunction(
        (top) => document.querySelector('main table tbody tr td:nth-child(2)')?.textContent !== top,
        firstPageTop,
      );
      assert.equal(await page.locator('main table tbody tr').count(), 5);
      await page.screenshot({ path: `${ARTIFACTS}console-pager-last-page-light.png`, fullPage: true });
      await page.emulateMedia({ colorScheme: 'dark' });
      await page.screenshot({ path: `${ARTIFACTS}console-pager-last-page-dark.png`, fullPage: true });
      await page.emulateMedia({ colorScheme: 'light' });
      assert.equal(await previous.isDisabled(), false);
      assert.equal(await next.isDisabled(), true, 'Next on the last page');
      await previous.click();
      await page.waitForFunction(
        (top) => document.querySelector('main table tbody tr td:nth-child(2)')?.textContent === top,
        firstPageTop,
      );
      assert.equal(await page.locator('main table tbody tr').count(), 25);
      assert.equal(await previous.isDisabled(), true, 'Previous back on the first page');
    } finally {
      await context.close();
    }
  },
);
