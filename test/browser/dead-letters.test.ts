import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { ARTIFACTS, signIn, startReceiver, startWorld, type Receiver, type World } from './harness.ts';

let world: World;
let receiver: Receiver;

before(async () => {
  // Two attempts 10 ms apart, then a dead letter; tasks picked up at once.
  world = await startWorld({
    TIDINGS_RETRY_SCHEDULE: '10ms',
    TIDINGS_RETRY_JITTER: '0',
    TIDINGS_TASK_POLL_INTERVAL: '50ms',
  });
  receiver = await startReceiver();
});

after(async () => {
  await receiver?.close();
  await world?.stop();
});

/** Polls the delivery's state through the API until it is `state` (bounded: 150 × 100 ms). */
async function waitForState(app: string, msg: string, ep: string, state: string): Promise<void> {
  for (let i = 0; i < 150; i++) {
    const t = await world.api<{ deliveryState: string }>(
      'GET',
      `/api/v1/app/${app}/msg/${msg}/endpoint/${ep}/timeline`,
    );
    if (t.body.deliveryState === state) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.fail(`delivery never became ${state}`);
}

test(
  'a failing receiver makes a dead letter; after it recovers, bulk replay from the dead-letter page delivers it, ' +
    'with the task progress shown',
  async () => {
    receiver.answer = { status: 500, body: 'down for maintenance', contentType: 'text/plain' };
    const app = (await world.api<{ id: string }>('POST', '/api/v1/app', { name: 'Failing Co' })).body.id;
    const ep = (await world.api<{ id: string }>('POST', `/api/v1/app/${app}/endpoint`, { url: `${receiver.url}/down` }))
      .body.id;
    const msg = (
      await world.api<{ id: string }>('POST', `/api/v1/app/${app}/msg`, {
        eventType: 'invoice.failed',
        payload: { n: 1 },
      })
    ).body.id;
    await waitForState(app, msg, ep, 'dead');
    receiver.answer = { status: 204, body: '', contentType: 'text/plain' };

    const { context, page } = await world.page();
    try {
      await signIn(page, world.url, world.token, `/apps/${app}/dead-letters`);
      const row = page.locator('tbody tr', { hasText: 'invoice.failed' });
      await row.waitFor();
      assert.match((await row.textContent()) ?? '', /exhausted/);
      await page.getByRole('checkbox', { name: `Select ${msg} to ${ep}` }).check();
      await page.getByRole('button', { name: 'Replay selected (1)' }).click();
      const progress = page.locator('[role=status]', { hasText: 'Replay task' });
      await progress.getByText('finished').waitFor({ timeout: 20_000 });
      assert.match((await progress.locator('.task-progress').textContent()) ?? '', /messages sent: 1/);
      await waitForState(app, msg, ep, 'succeeded');
      // The page's own polling empties the list once the delivery left the dead state.
      await page.getByText('No dead letters.').waitFor({ timeout: 10_000 });
      await page.screenshot({ path: `${ARTIFACTS}dead-letters-replayed.png`, fullPage: true });
      await page.goto(`${world.url}/console#/apps/${app}/messages/${msg}/endpoints/${ep}`);
      await page.locator('.timeline .badge', { hasText: 'succeeded' }).waitFor({ timeout: 10_000 });
      assert.equal(receiver.requests.filter((r) => r.path === '/down').length, 3);
    } finally {
      await context.close();
    }
  },
);
