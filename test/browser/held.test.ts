import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { ARTIFACTS, signIn, startReceiver, startWorld, type Receiver, type World } from './harness.ts';

/**
 * Regression: deliveries held back by an open circuit breaker were shown as due ("due now" on the overview,
 * a next attempt "33 seconds ago" on the timeline and the destinations). They are named as held by the
 * breaker until a time, and the endpoint page offers "Probe now" and "Close breaker".
 */

let world: World;
let receiver: Receiver;
const ids = { app: '', ep: '', held: [] as string[] };

/** Polls until `ready` holds (bounded: 150 × 100 ms). */
async function until(what: string, ready: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 150; i++) {
    if (await ready()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.fail(`never: ${what}`);
}

before(async () => {
  // Two failures in a row open the breaker for ten minutes; a failed delivery is retried once, 10 ms later.
  world = await startWorld({
    TIDINGS_BREAKER_THRESHOLD: '2',
    TIDINGS_BREAKER_COOLDOWN: '10m',
    TIDINGS_RETRY_SCHEDULE: '10ms',
    TIDINGS_RETRY_JITTER: '0',
  });
  receiver = await startReceiver();
  receiver.answer = { status: 500, body: 'down', contentType: 'text/plain' };
  ids.app = (await world.api<{ id: string }>('POST', '/api/v1/app', { name: 'Held Co' })).body.id;
  ids.ep = (
    await world.api<{ id: string }>('POST', `/api/v1/app/${ids.app}/endpoint`, { url: `${receiver.url}/held` })
  ).body.id;
  const health = `/api/v1/app/${ids.app}/endpoint/${ids.ep}/health`;
  await world.api('POST', `/api/v1/app/${ids.app}/msg`, { eventType: 'held.first', payload: {} });
  await until(
    'the breaker opened',
    async () => (await world.api<{ breaker: { state: string } }>('GET', health)).body.breaker.state === 'open',
  );
  for (let i = 0; i < 3; i++)
    ids.held.push(
      (
        await world.api<{ id: string }>('POST', `/api/v1/app/${ids.app}/msg`, {
          eventType: 'held.later',
          payload: { i },
        })
      ).body.id,
    );
  await until('the new deliveries are held by the breaker', async () => {
    const d = await world.api<{ data: { heldBy: string | null }[] }>(
      'GET',
      `/api/v1/app/${ids.app}/msg/${ids.held[2]}/endpoint`,
    );
    return d.body.data[0]?.heldBy === 'breaker';
  });
});

after(async () => {
  await receiver?.close();
  await world?.stop();
});

test(
  "deliveries held by an open breaker are named as held until the breaker's time on the destinations, the " +
    'timeline, the messages of the endpoint and the overview, never as due',
  async () => {
    const { context, page } = await world.page();
    try {
      const msg = ids.held[0]!;
      await signIn(page, world.url, world.token, `/apps/${ids.app}/messages/${msg}`);
      const next = page.locator('main td[data-label="Next attempt"]').first();
      await next.getByText(/held by the circuit breaker until/).waitFor();
      assert.doesNotMatch((await next.textContent()) ?? '', /ago/);
      await page.evaluate((r) => {
        location.hash = r;
      }, `/apps/${ids.app}/messages/${msg}/endpoints/${ids.ep}`);
      const fact = page.locator('dt', { hasText: 'Next attempt' }).locator('xpath=following-sibling::dd[1]');
      await fact.getByText(/held by the circuit breaker until/).waitFor();
      assert.match((await fact.textContent()) ?? '', /until \d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ \(in \d+ minutes\)/);
      await page.screenshot({ path: `${ARTIFACTS}held-timeline.png`, fullPage: true });
      await page.evaluate((r) => {
        location.hash = r;
      }, `/apps/${ids.app}/messages`);
      const filters = page.getByRole('form', { name: 'Filter messages' });
      await filters
        .getByLabel(/^Endpoint/)
        .locator('option', { hasText: `${receiver.url}/held` })
        .waitFor({ state: 'attached' });
      await filters.getByLabel(/^Endpoint/).selectOption(ids.ep);
      await filters.getByRole('button', { name: 'Apply filters' }).click();
      const row = page.locator('main tbody tr', { hasText: msg });
      await row
        .locator('td[data-label="Next attempt"]')
        .getByText(/held by the circuit breaker until/)
        .waitFor();
      await page.evaluate((r) => {
        location.hash = r;
      }, '/');
      const backlog = page.getByRole('region', { name: 'Backlog' });
      await backlog.getByText(/held by their endpoint/).waitFor();
      assert.match((await backlog.textContent()) ?? '', /0 due now/);
      assert.match((await backlog.textContent()) ?? '', /3 held by their endpoint \(3 by an open breaker\)/);
    } finally {
      await context.close();
    }
  },
);

test(
  'the endpoint page says what the open breaker holds; "Probe now" ends its cool-down and "Close breaker" (after ' +
    'a dialog) sends the held deliveries',
  async () => {
    const { context, page } = await world.page();
    try {
      await signIn(page, world.url, world.token, `/apps/${ids.app}/endpoints/${ids.ep}`);
      const card = page.locator('section[aria-labelledby="breaker-h"]');
      await card.getByText(/3 pending deliveries are held by the breaker until/).waitFor();
      await card.getByRole('button', { name: 'Probe now' }).click();
      await page.locator('.history', { hasText: 'breaker probe requested' }).waitFor({ timeout: 10_000 });
      // The receiver still fails: the probe's failure opens the breaker again, for a longer cool-down.
      const health = `/api/v1/app/${ids.app}/endpoint/${ids.ep}/health`;
      await until('the probe failed and the breaker opened again', async () => {
        const b = (await world.api<{ breaker: { state: string; openedInARow: number } }>('GET', health)).body.breaker;
        return b.state === 'open' && b.openedInARow === 2;
      });
      await card.getByText(/it opened 2 times in a row/).waitFor({ timeout: 10_000 });
      receiver.answer = { status: 204, body: '', contentType: 'text/plain' };
      await card.getByRole('button', { name: 'Close breaker' }).click();
      const dialog = page.locator('dialog[open]');
      assert.match((await dialog.textContent()) ?? '', /Its 3 held deliveries are sent again/);
      await dialog.getByRole('button', { name: 'Close breaker' }).click();
      await until('every held delivery succeeded', async () => {
        for (const msg of ids.held) {
          const t = await world.api<{ deliveryState: string }>(
            'GET',
            `/api/v1/app/${ids.app}/msg/${msg}/endpoint/${ids.ep}/timeline`,
          );
          if (t.body.deliveryState !== 'succeeded') return false;
        }
        return true;
      });
      await card.waitFor({ state: 'detached', timeout: 10_000 });
    } finally {
      await context.close();
    }
  },
);
