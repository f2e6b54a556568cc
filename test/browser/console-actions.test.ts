import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Page } from 'playwright-core';
import { ARTIFACTS, signIn, startReceiver, startWorld, type Receiver, type World } from './harness.ts';

let world: World;
let receiver: Receiver;
const ids = { app: '', other: '', ok: '', down: '', otherDown: '' };

/** Polls the API until `ready` holds (bounded: 150 × 100 ms). */
async function until(what: string, ready: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 150; i++) {
    if (await ready()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.fail(`never: ${what}`);
}

before(async () => {
  // Two attempts 10 ms apart, then a dead letter.
  world = await startWorld({
    TIDINGS_RETRY_SCHEDULE: '10ms',
    TIDINGS_RETRY_JITTER: '0',
    TIDINGS_TASK_POLL_INTERVAL: '50ms',
  });
  receiver = await startReceiver();
  const failing = { status: 500, body: 'down', contentType: 'text/plain' };
  for (const path of ['/down', '/other-down']) receiver.byPath.set(path, failing);
  ids.app = (await world.api<{ id: string }>('POST', '/api/v1/app', { name: 'Actions Co' })).body.id;
  ids.other = (await world.api<{ id: string }>('POST', '/api/v1/app', { name: 'Other Co' })).body.id;
  ids.ok = (
    await world.api<{ id: string }>('POST', `/api/v1/app/${ids.app}/endpoint`, {
      url: `${receiver.url}/ok`,
      filterTypes: ['ok.event'],
    })
  ).body.id;
  ids.down = (
    await world.api<{ id: string }>('POST', `/api/v1/app/${ids.app}/endpoint`, {
      url: `${receiver.url}/down`,
      filterTypes: ['down.event'],
    })
  ).body.id;
  ids.otherDown = (
    await world.api<{ id: string }>('POST', `/api/v1/app/${ids.other}/endpoint`, { url: `${receiver.url}/other-down` })
  ).body.id;
  for (const type of ['ok.event', 'down.event'])
    await world.api('POST', `/api/v1/app/${ids.app}/msg`, { eventType: type, payload: { type } });
  await world.api('POST', `/api/v1/app/${ids.other}/msg`, { eventType: 'down.event', payload: {} });
  await until(
    'both applications have a dead letter',
    async () => (await deadCount(ids.app)) === 1 && (await deadCount(ids.other)) === 1,
  );
});

after(async () => {
  await receiver?.close();
  await world?.stop();
});

const deadCount = async (app: string): Promise<number> =>
  (await world.api<{ data: unknown[] }>('GET', `/api/v1/app/${app}/dead-letter`)).body.data.length;
const taskCount = async (): Promise<number> =>
  (await world.api<{ data: unknown[] }>('GET', '/api/v1/background-task?limit=250')).body.data.length;

/** The open confirmation dialog (its title names what changes). */
const dialog = (page: Page) => page.locator('dialog[open]');

test(
  'the messages page asks for an endpoint before a delivery state (no hidden "first endpoint"), then lists that ' +
    "endpoint's deliveries in that state",
  async () => {
    const { context, page } = await world.page();
    try {
      await signIn(page, world.url, world.token, `/apps/${ids.app}/messages`);
      const form = page.getByRole('form', { name: 'Filter messages' });
      const state = form.getByLabel(/^Delivery state/);
      const endpoint = form.getByLabel(/^Endpoint/);
      await endpoint.locator('option', { hasText: `${receiver.url}/ok` }).waitFor({ state: 'attached' });
      assert.equal(await state.isDisabled(), true, 'a state alone cannot be chosen');
      await endpoint.selectOption(ids.ok);
      assert.equal(await state.isDisabled(), false);
      await state.selectOption({ label: 'succeeded' });
      await form.getByRole('button', { name: 'Apply filters' }).click();
      await page.getByText(`Deliveries to ${receiver.url}/ok`).waitFor();
      await page.locator('main table tbody tr').first().waitFor();
      const types = await page.locator('main table tbody tr td:first-child').allTextContents();
      assert.deepEqual(types, ['ok.event'], "only the chosen endpoint's delivery");
      // Clearing the endpoint clears the state with it.
      await endpoint.selectOption('');
      assert.equal(await state.isDisabled(), true);
      assert.equal(await state.inputValue(), '');
    } finally {
      await context.close();
    }
  },
);

test(
  'dead letters show their endpoint; "Replay all matching" asks first in a dialog naming the application and the ' +
    'filters, and Cancel replays nothing',
  async () => {
    const { context, page } = await world.page();
    try {
      await signIn(page, world.url, world.token, `/apps/${ids.app}/dead-letters`);
      const row = page.locator('main tbody tr', { hasText: 'down.event' });
      await row.waitFor();
      // The endpoint's URL, once the application's endpoints are loaded (its id until then).
      await row
        .locator('td[data-label="Endpoint"]')
        .getByRole('link', { name: `${receiver.url}/down`, exact: true })
        .waitFor();
      assert.match((await row.locator('td[data-label="Endpoint"]').textContent()) ?? '', new RegExp(ids.down));
      const tasks = await taskCount();
      await page.getByRole('button', { name: 'Replay all matching' }).click();
      await dialog(page).waitFor();
      assert.match(
        (await dialog(page).getByRole('heading').textContent()) ?? '',
        /Replay all matching dead letters of Actions Co\?/,
      );
      assert.deepEqual(await dialog(page).locator('li').allTextContents(), [
        'application Actions Co',
        'every endpoint',
        'every event type',
        'messages of any time',
      ]);
      await page.screenshot({ path: `${ARTIFACTS}dead-letters-replay-all-dialog.png` });
      await dialog(page).getByRole('button', { name: 'Cancel' }).click();
      await dialog(page).waitFor({ state: 'detached' });
      assert.equal(await taskCount(), tasks, 'Cancel started no task');
      assert.equal(await deadCount(ids.app), 1);
      // Filtered by endpoint, the dialog names it; confirming starts one task.
      const filters = page.getByRole('form', { name: 'Filter dead letters' });
      await filters.getByLabel('Endpoint').selectOption(ids.down);
      const filtered = page.waitForResponse((r) => r.url().includes(`/endpoint/${ids.down}/dead-letter`));
      await filters.getByRole('button', { name: 'Apply filters' }).click();
      await filtered;
      await page.getByRole('button', { name: 'Replay all matching' }).click();
      await dialog(page).waitFor();
      assert.equal((await dialog(page).locator('li').allTextContents())[1], `endpoint ${receiver.url}/down`);
      await dialog(page).getByRole('button', { name: 'Replay all matching' }).click();
      await page.locator('[role=status]', { hasText: 'Replay task' }).waitFor();
      assert.equal(await taskCount(), tasks + 1);
    } finally {
      await context.close();
    }
  },
);

test('the console lists dead letters across applications, each with its application and endpoint', async () => {
  const { context, page } = await world.page();
  try {
    await signIn(page, world.url, world.token, '/dead-letters');
    await page.getByRole('heading', { name: 'Dead letters, all applications', level: 1 }).waitFor();
    const row = page.locator('main tbody tr', { hasText: 'Other Co' });
    await row.waitFor({ timeout: 10_000 });
    assert.equal(
      await row.locator('td[data-label="Endpoint"] a').getAttribute('href'),
      `#/apps/${ids.other}/endpoints/${ids.otherDown}`,
    );
    assert.equal(
      await row.locator('td[data-label="Application"] a').getAttribute('href'),
      `#/apps/${ids.other}/dead-letters`,
    );
  } finally {
    await context.close();
  }
});

test(
  'an endpoint, an application and an event type are deleted from the console after a dialog naming each; Cancel ' +
    'deletes nothing',
  async () => {
    const app = (await world.api<{ id: string }>('POST', '/api/v1/app', { name: 'Doomed Co' })).body.id;
    const ep = (
      await world.api<{ id: string }>('POST', `/api/v1/app/${app}/endpoint`, { url: `${receiver.url}/doomed` })
    ).body.id;
    await world.api('PUT', '/api/v1/event-type/doomed.event', { description: 'to delete' });
    const { context, page } = await world.page();
    try {
      await signIn(page, world.url, world.token, `/apps/${app}/endpoints/${ep}`);
      await page.getByRole('button', { name: 'Delete endpoint' }).click();
      assert.equal(await dialog(page).getByRole('heading').textContent(), `Delete endpoint ${receiver.url}/doomed?`);
      assert.match((await dialog(page).textContent()) ?? '', new RegExp(`Endpoint ${ep}`));
      await page.keyboard.press('Escape');
      await dialog(page).waitFor({ state: 'detached' });
      assert.equal((await world.api('GET', `/api/v1/app/${app}/endpoint/${ep}`)).status, 200, 'Escape deleted nothing');
      await page.getByRole('button', { name: 'Delete endpoint' }).click();
      await dialog(page).getByRole('button', { name: 'Delete endpoint' }).click();
      await page.getByRole('heading', { name: 'Endpoints', level: 1 }).waitFor();
      assert.equal((await world.api('GET', `/api/v1/app/${app}/endpoint/${ep}`)).status, 404);

      await page.evaluate((r) => {
        location.hash = r;
      }, `/apps/${app}/settings`);
      await page.getByRole('button', { name: 'Delete application' }).click();
      assert.equal(await dialog(page).getByRole('heading').textContent(), 'Delete the application Doomed Co?');
      // The count comes from the application's endpoint list, which may still be loading when the dialog opens.
      await dialog(page)
        .getByText(new RegExp(`Application ${app} is deleted with its 0 endpoints`))
        .waitFor();
      await dialog(page).getByRole('button', { name: 'Delete application' }).click();
      await page.getByRole('heading', { name: 'Applications', level: 1 }).waitFor();
      assert.equal((await world.api('GET', `/api/v1/app/${app}`)).status, 404);

      await page.evaluate((r) => {
        location.hash = r;
      }, '/event-types/doomed.event');
      await page.getByRole('button', { name: 'Delete doomed.event' }).click();
      assert.equal(
        await dialog(page).getByRole('heading').textContent(),
        'Delete the event type doomed.event for good?',
      );
      await dialog(page).getByRole('button', { name: 'Delete event type' }).click();
      await page.getByRole('heading', { name: 'Event types', level: 1 }).waitFor();
      assert.equal((await world.api('GET', '/api/v1/event-type/doomed.event')).status, 404);
    } finally {
      await context.close();
    }
  },
);

test(
  'a failed load shows the error and a Retry button, never an ' + 'endless "Loading…"; Retry loads the page',
  async () => {
    const { context, page } = await world.page();
    try {
      await signIn(page, world.url, world.token);
      let refuse = true;
      await page.route('**/api/v1/app/*/endpoint?*', (route) =>
        refuse
          ? route.fulfill({
              status: 503,
              contentType: 'application/json',
              body: '{"code":"unavailable","detail":"try again"}',
            })
          : route.continue(),
      );
      await page.evaluate((r) => {
        location.hash = r;
      }, `/apps/${ids.app}/endpoints`);
      const error = page.locator('main .error', { hasText: 'unavailable' });
      await error.waitFor();
      assert.equal(await page.locator('main .loading').count(), 0, 'no spinner beside the error');
      refuse = false;
      await error.getByRole('button', { name: 'Retry' }).click();
      await page.getByRole('link', { name: `${receiver.url}/ok` }).waitFor();
      assert.equal(await page.locator('main .error').count(), 0);
    } finally {
      await context.close();
    }
  },
);
