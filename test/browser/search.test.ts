import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Page } from 'playwright-core';
import {
  ARTIFACTS,
  seriousViolations,
  signIn,
  startReceiver,
  startWorld,
  type Receiver,
  type World,
} from './harness.ts';

/**
 * The search pages of the console and the portal (web/src/shared/search.tsx) and the never-delivered view of the
 * endpoint page (web/src/shared/undelivered.tsx), on real data: 30 messages, two endpoints, one of them disabled
 * while ten were published. A search pages through its results, opens one and comes back to the same page; two
 * results' records are reached by address; the never-delivered view lists the ten skipped; the portal finds its
 * own application's messages only; an empty search says so; a refused search shows the refusal with a Retry.
 */

let world: World;
let receiver: Receiver;
const ids = { app: '', up: '', down: '', other: '', otherEp: '', empty: '', emptyEp: '', msgs: [] as string[] };
let portal = '';
const MESSAGES = 30;

/** Polls until the receiver holds `n` requests (bounded: 200 × 100 ms). */
async function received(n: number): Promise<void> {
  for (let i = 0; i < 200 && receiver.requests.length < n; i++) await new Promise((r) => setTimeout(r, 100));
  assert.equal(receiver.requests.length, n, 'requests received');
}

const post = async (path: string, body: unknown): Promise<string> => {
  const res = await world.api<{ id: string }>('POST', path, body);
  assert.ok(res.status < 300, `${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.id;
};

before(async () => {
  world = await startWorld();
  receiver = await startReceiver();
  ids.app = await post('/api/v1/app', { name: 'Searchable Co' });
  ids.up = await post(`/api/v1/app/${ids.app}/endpoint`, { url: `${receiver.url}/up`, description: 'Up' });
  ids.down = await post(`/api/v1/app/${ids.app}/endpoint`, { url: `${receiver.url}/sometimes` });
  for (let i = 0; i < MESSAGES; i++) {
    if (i === 10) await world.api('PATCH', `/api/v1/app/${ids.app}/endpoint/${ids.down}`, { disabled: true });
    if (i === 20) await world.api('PATCH', `/api/v1/app/${ids.app}/endpoint/${ids.down}`, { disabled: false });
    const eventType = i % 2 === 0 ? 'order.created' : 'order.paid';
    ids.msgs.push(await post(`/api/v1/app/${ids.app}/msg`, { eventType, payload: { customer: { id: `cus_${i}` } } }));
  }
  ids.other = await post('/api/v1/app', { name: 'Other Co' });
  ids.otherEp = await post(`/api/v1/app/${ids.other}/endpoint`, { url: `${receiver.url}/other` });
  await post(`/api/v1/app/${ids.other}/msg`, { eventType: 'order.created', payload: { customer: { id: 'cus_x' } } });
  ids.empty = await post('/api/v1/app', { name: 'Quiet Co' });
  ids.emptyEp = await post(`/api/v1/app/${ids.empty}/endpoint`, { url: `${receiver.url}/quiet` });
  await received(MESSAGES + 20 + 1);
  portal = (await world.api<{ url: string }>('POST', `/api/v1/auth/app-portal-access/${ids.app}`, {})).body.url;
});

after(async () => {
  await receiver?.close();
  await world?.stop();
});

/** Goes to `route` by address (the fragment changes; no reload). */
const go = (page: Page, route: string): Promise<void> =>
  page.evaluate((r) => {
    location.hash = r;
  }, route);

/** Waits until nothing is loading. */
const settled = (page: Page): Promise<unknown> =>
  page.waitForFunction(() => document.querySelectorAll('.loading').length === 0, undefined, { timeout: 10_000 });

/** The message ids the results table links to, in order. */
const linkedMessages = (page: Page): Promise<string[]> =>
  page.evaluate(() =>
    Array.from(document.querySelectorAll('main table a[data-msg]'), (a) => a.getAttribute('data-msg') ?? ''),
  );

/**
 * Screenshots of the page at phone and desktop width in both themes (`name`-<width>-<theme>.png); with `region`,
 * of that region of it too (`name`-<width>-<theme>-region.png).
 */
async function shots(name: string, open: (page: Page) => Promise<void>, region?: string): Promise<void> {
  for (const theme of ['light', 'dark'] as const) {
    for (const width of [390, 1280]) {
      const { context, page } = await world.page({ width, height: 844, colorScheme: theme });
      try {
        await open(page);
        await settled(page);
        await page.screenshot({ path: `${ARTIFACTS}${name}-${width}-${theme}.png`, fullPage: true });
        if (region !== undefined) {
          const part = page.getByRole('region', { name: region });
          await part.screenshot({ path: `${ARTIFACTS}${name}-${width}-${theme}-region.png` });
        }
        const wide = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
        assert.ok(wide <= 0, `${name} at ${width} px is ${wide} px wider than the window`);
      } finally {
        await context.close();
      }
    }
  }
}

test('the console searches, pages, opens a result and comes back to the same page of results', async () => {
  const { context, page } = await world.page();
  try {
    await signIn(page, world.url, world.token, `/apps/${ids.app}/search`);
    await page.getByRole('heading', { level: 1, name: 'Search' }).waitFor();
    await settled(page);
    const newest = [...ids.msgs].reverse();
    assert.deepEqual(await linkedMessages(page), newest.slice(0, 25), 'the first page: the newest 25');
    await page.getByRole('button', { name: 'Next page →' }).click();
    await page.waitForFunction(() => location.hash.includes('it='));
    await settled(page);
    assert.deepEqual(await linkedMessages(page), newest.slice(25), 'the second page: the 5 oldest');
    assert.ok(await page.getByRole('button', { name: 'Next page →' }).isDisabled(), 'no page after the last');
    assert.deepEqual(await seriousViolations(page), []);

    // Open a result, then come back: the same page of the same search.
    const second = page.url();
    await page.getByRole('link', { name: `order.created ${ids.msgs[2]}` }).click();
    await page.getByRole('heading', { level: 1, name: 'order.created' }).waitFor();
    assert.match((await page.locator('main .page-head').textContent()) ?? '', new RegExp(ids.msgs[2]!));
    await page.goBack();
    await settled(page);
    assert.equal(page.url(), second);
    assert.deepEqual(await linkedMessages(page), newest.slice(25));

    // Two results' records by address: each page shows its own record.
    for (const msg of [ids.msgs[3]!, ids.msgs[4]!]) {
      await go(page, `/apps/${ids.app}/messages/${msg}`);
      await page.locator('main .page-head', { hasText: msg }).waitFor();
      const other = msg === ids.msgs[3] ? ids.msgs[4]! : ids.msgs[3]!;
      assert.ok(!((await page.locator('main').textContent()) ?? '').includes(other), `${msg}'s page shows ${other}`);
    }

    // Deliveries not delivered, with why; each links to its timeline.
    await go(page, `/apps/${ids.app}/search`);
    await settled(page);
    await page.getByLabel('Look for').selectOption('delivery');
    await page.getByLabel('Delivery state').selectOption('undelivered');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await page.waitForFunction(() => location.hash.includes('state=undelivered'));
    await settled(page);
    const rows = page.locator('main table tbody tr');
    assert.equal(await rows.count(), 10);
    assert.match((await rows.first().textContent()) ?? '', /skipped\s+endpoint disabled/);
    await page.screenshot({ path: `${ARTIFACTS}search-undelivered.png`, fullPage: true });
    // Attempts to one endpoint by their exact status, from an address.
    await go(page, `/apps/${ids.app}/search?kind=attempt&endpoint=${ids.down}&statusCode=204`);
    await page.locator('main table[aria-label="Attempts found"]').waitFor();
    await settled(page);
    assert.equal(await page.locator('main table tbody tr').count(), 20, 'the 20 delivered to it, each answered 204');
    assert.equal(await page.getByLabel('Status code').inputValue(), '204');
    await go(page, `/apps/${ids.app}/search?kind=attempt&endpoint=${ids.down}&statusCode=500`);
    await page.getByText('Nothing matches in this window.').waitFor();
    await go(page, `/apps/${ids.app}/search?kind=delivery&state=undelivered`);
    await settled(page);
    await rows
      .first()
      .getByRole('link', { name: /^Timeline of / })
      .click();
    await page.locator('main table.timeline, main h1').first().waitFor();
    assert.match(page.url(), new RegExp(`/messages/${ids.msgs[19]}/endpoints/${ids.down}$`));
  } finally {
    await context.close();
  }
});

test('an empty search says so; a refused search shows the refusal and a Retry, not an endless Loading', async () => {
  const { context, page } = await world.page();
  try {
    await signIn(page, world.url, world.token, `/apps/${ids.app}/search?eventType=nothing.here`);
    await page.getByText('Nothing matches in this window.').waitFor();
    await go(page, `/apps/${ids.app}/search?after=2000-01-01T00%3A00`);
    await page.locator('main .error', { hasText: 'search_unbounded' }).waitFor({ timeout: 10_000 });
    assert.match((await page.locator('main .error').textContent()) ?? '', /after: the window from after to before/);
    assert.ok(await page.getByRole('button', { name: 'Retry' }).isVisible());
    assert.equal(await page.locator('.loading').count(), 0);
    await page.screenshot({ path: `${ARTIFACTS}search-refused.png`, fullPage: true });
  } finally {
    await context.close();
  }
});

test('the endpoint page lists what never reached the endpoint: the ten published while it was disabled', async () => {
  const { context, page } = await world.page();
  try {
    await signIn(page, world.url, world.token, `/apps/${ids.app}/endpoints/${ids.down}`);
    const view = page.getByRole('region', { name: 'Never delivered' });
    await view.locator('tbody tr').first().waitFor({ timeout: 10_000 });
    assert.equal(await view.locator('tbody tr').count(), 10);
    const linked = await view.locator('a[data-msg]').evaluateAll((as) => as.map((a) => a.getAttribute('data-msg')));
    assert.deepEqual(linked, ids.msgs.slice(10, 20).reverse());
    await view.getByLabel('State').selectOption('dead');
    await view.getByRole('button', { name: 'Show' }).click();
    await view.getByText('Everything published in this window was delivered.').waitFor();
  } finally {
    await context.close();
  }
});

test("the portal searches its own application's log only, by a payload field", async () => {
  const { context, page } = await world.page();
  try {
    await page.goto(portal);
    await page.getByRole('link', { name: 'Search' }).click();
    await settled(page);
    const shown = await linkedMessages(page);
    assert.equal(shown.length, 25);
    assert.ok(
      shown.every((m) => ids.msgs.includes(m)),
      'only its own messages',
    );
    await page.getByLabel('Payload field').fill('customer.id');
    await page.getByLabel('Field value').fill('cus_7');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await page.waitForFunction(() => location.hash.includes('field=customer.id'));
    await settled(page);
    assert.deepEqual(await linkedMessages(page), [ids.msgs[7]]);
    await page.getByLabel('Field value').fill('cus_x');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await page.getByText('Nothing matches in this window.').waitFor();
    assert.deepEqual(await seriousViolations(page), []);
  } finally {
    await context.close();
  }
});

test('screenshots: search and never-delivered, console and portal, real and empty data, 390 and 1280 px', async () => {
  const consoleAt = (route: string) => async (page: Page) => {
    await signIn(page, world.url, world.token, route);
    await page.locator('main h1').first().waitFor();
  };
  await shots('search-console-real', consoleAt(`/apps/${ids.app}/search?kind=delivery`));
  await shots('search-console-empty', consoleAt(`/apps/${ids.empty}/search`));
  const endpointAt = (app: string, ep: string) => async (page: Page) => {
    await consoleAt(`/apps/${app}/endpoints/${ep}`)(page);
    await page.getByRole('region', { name: 'Never delivered' }).locator('table, .empty').first().waitFor();
  };
  await shots('endpoint-never-delivered-real', endpointAt(ids.app, ids.down), 'Never delivered');
  await shots('endpoint-never-delivered-empty', endpointAt(ids.empty, ids.emptyEp), 'Never delivered');
  const emptyPortal = (await world.api<{ url: string }>('POST', `/api/v1/auth/app-portal-access/${ids.empty}`, {})).body
    .url;
  const portalAt = (url: string) => async (page: Page) => {
    await page.goto(url);
    await page.getByRole('link', { name: 'Search' }).click();
    await page.locator('main h1', { hasText: 'Search' }).waitFor();
  };
  await shots('search-portal-real', portalAt(portal));
  await shots('search-portal-empty', portalAt(emptyPortal));
});
