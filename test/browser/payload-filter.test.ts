/**
 * The endpoint page's payload filter editor (docs/reference/api.md, "Payload filters"), in the console and the
 * portal: a filter saved, a sample message tested (match and no match), a malformed filter refused naming the part,
 * and the saved filter deciding which messages get a delivery. Screenshots of both themes at 390 and 1280 px.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Page } from 'playwright-core';
import { ARTIFACTS, signIn, startWorld, type World } from './harness.ts';

let world: World;
let app = '';
let endpoint = '';
let other = '';

before(async () => {
  world = await startWorld();
  app = (await world.api<{ id: string }>('POST', '/api/v1/app', { name: 'Filter Co' })).body.id;
  const url = 'http://127.0.0.1:9/filtered';
  endpoint = (await world.api<{ id: string }>('POST', `/api/v1/app/${app}/endpoint`, { url })).body.id;
  other = (await world.api<{ id: string }>('POST', `/api/v1/app/${app}/endpoint`, { url: `${url}-not` })).body.id;
});

after(async () => {
  await world?.stop();
});

/** The filter card of the endpoint page. */
const card = (page: Page) => page.locator('section.card', { has: page.locator('h2', { hasText: 'Payload filter' }) });

/** Types `text` into the card's textarea named `name`, replacing what it held. */
async function fill(page: Page, name: string, text: string): Promise<void> {
  await card(page).locator(`textarea[name="${name}"]`).fill(text);
}

test('the console saves a filter, tests samples (match, no match), refuses a malformed one', async () => {
  const { context, page } = await world.page();
  try {
    await signIn(page, world.url, world.token);
    await page.evaluate((r) => {
      location.hash = r;
    }, `/apps/${app}/endpoints/${endpoint}`);
    await card(page).locator('textarea[name="filter"]').waitFor({ timeout: 15_000 });
    // A malformed filter: refused with the part named, nothing saved.
    await fill(page, 'filter', '{"payload": {"amount": {"$gt": "100"}}}');
    await card(page).getByRole('button', { name: 'Save filter' }).click();
    const error = card(page).locator('.error');
    await error.waitFor();
    assert.match((await error.textContent()) ?? '', /422.*body\.filter\.payload\.amount\.\$gt: expected a number/);
    assert.deepEqual((await world.api(`GET`, `/api/v1/app/${app}/endpoint/${endpoint}/filter`)).body, { filter: null });
    // A good one: saved, and read back by the API.
    await fill(page, 'filter', '{"payload": {"amount": {"$gte": 100}}}');
    await card(page).getByRole('button', { name: 'Save filter' }).click();
    await card(page).getByText('Filter saved.').waitFor();
    const saved = await world.api(`GET`, `/api/v1/app/${app}/endpoint/${endpoint}/filter`);
    assert.deepEqual(saved.body, { filter: { payload: { amount: { $gte: 100 } } } });
    // Samples: one that matches, one that does not.
    await fill(page, 'samplePayload', '{"amount": 250}');
    await card(page).getByRole('button', { name: 'Test filter' }).click();
    await card(page).getByText('match · this endpoint gets a delivery').waitFor();
    await fill(page, 'samplePayload', '{"amount": 5}');
    await card(page).getByRole('button', { name: 'Test filter' }).click();
    await card(page).getByText('no match · no delivery').waitFor();
    await page.screenshot({ path: `${ARTIFACTS}payload-filter-console-1280-light.png`, fullPage: true });
  } finally {
    await context.close();
  }
  // The saved filter decides: of two messages, only the matching one makes a delivery to the endpoint.
  const publish = async (amount: number) =>
    (
      await world.api<{ id: string }>('POST', `/api/v1/app/${app}/msg`, {
        eventType: 'order.paid',
        payload: { amount },
      })
    ).body.id;
  const destinations = async (msg: string) =>
    (await world.api<{ data: { id: string }[] }>('GET', `/api/v1/app/${app}/msg/${msg}/endpoint`)).body.data
      .map((d) => d.id)
      .sort();
  assert.deepEqual(await destinations(await publish(300)), [endpoint, other].sort());
  const small = await publish(3);
  assert.deepEqual(await destinations(small), [other]);
  const skipped = await world.api<{ data: { endpointId: string }[] }>(
    'GET',
    `/api/v1/app/${app}/msg/${small}/filtered-endpoint`,
  );
  assert.deepEqual(
    skipped.body.data.map((d) => d.endpointId),
    [endpoint],
  );
});

test('the portal shows the same editor; screenshots in both themes at 390 and 1280 px', async () => {
  const access = await world.api<{ url: string }>('POST', `/api/v1/auth/app-portal-access/${app}`, {});
  for (const colorScheme of ['light', 'dark'] as const) {
    for (const width of [390, 1280]) {
      const { context, page } = await world.page({ width, height: 900, colorScheme });
      try {
        await page.goto(access.body.url);
        await page.evaluate((r) => {
          location.hash = r;
        }, `/endpoints/${endpoint}`);
        await card(page).locator('textarea[name="filter"]').waitFor({ timeout: 15_000 });
        assert.match(await card(page).locator('textarea[name="filter"]').inputValue(), /"\$gte": 100/);
        await fill(page, 'samplePayload', '{"amount": 120}');
        await card(page).getByRole('button', { name: 'Test filter' }).click();
        await card(page).getByText('match · this endpoint gets a delivery').waitFor();
        // Nothing wider than the phone's viewport.
        const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
        assert.ok(overflow <= 0, `the page is ${overflow} px wider than the viewport at ${width} px`);
        await card(page).scrollIntoViewIfNeeded();
        await card(page).screenshot({ path: `${ARTIFACTS}payload-filter-portal-${width}-${colorScheme}.png` });
      } finally {
        await context.close();
      }
    }
  }
});
