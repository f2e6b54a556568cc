/**
 * The endpoint page shows the endpoint's retry policy read only: every field as it applies, with where it comes from
 * (docs/reference/api.md, "Retry policies"); the console and the portal alike.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { signIn, startWorld, type World } from './harness.ts';

let world: World;
let app = '';
let endpoint = '';

before(async () => {
  world = await startWorld({ TIDINGS_RETRY_SCHEDULE: '5s,5m', TIDINGS_ATTEMPT_DEADLINE: '15s' });
  app = (await world.api<{ id: string }>('POST', '/api/v1/app', { name: 'Policy Co' })).body.id;
  const url = 'http://127.0.0.1:9/policy';
  endpoint = (await world.api<{ id: string }>('POST', `/api/v1/app/${app}/endpoint`, { url })).body.id;
  const policy = { schedule: ['10s', '1m'], maxAttempts: 5 };
  const set = await world.api('PUT', `/api/v1/app/${app}/endpoint/${endpoint}/retry-policy`, policy);
  assert.equal(set.status, 200);
});

after(async () => {
  await world?.stop();
});

test("the endpoint page shows the effective retry policy and each field's source, with nothing to edit", async () => {
  const { context, page } = await world.page();
  try {
    await signIn(page, world.url, world.token);
    await page.evaluate((r) => {
      location.hash = r;
    }, `/apps/${app}/endpoints/${endpoint}`);
    const card = page.locator('section.card', { has: page.locator('h2', { hasText: 'Retry policy' }) });
    await card.locator('dl.facts').waitFor({ timeout: 15_000 });
    const facts = await card.locator('dd').allTextContents();
    assert.deepEqual(facts, ['10 s, 1 min (this endpoint)', '15 s (the installation)', '5 (this endpoint)']);
    assert.equal(await card.locator('input, button, select, textarea').count(), 0, 'read only');
  } finally {
    await context.close();
  }
});
