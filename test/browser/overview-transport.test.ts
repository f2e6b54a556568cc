/**
 * The console overview's transport tile names TIDINGS_TRANSPORT and its health: PostgreSQL connected by default;
 * RabbitMQ (the machine's, under a prefix of this file that is deleted at the end) connected with the broker's depth
 * and the outbox's counters. Each in both themes at desktop and phone width, with no serious axe violation; the
 * screenshots go to the artifacts folder.
 */
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { deleteTopology, RABBITMQ_URL, testPrefix } from '../support/rabbitmq.ts';
import { ARTIFACTS, seriousViolations, signIn, startWorld, type World } from './harness.ts';

const SIZES = [
  ['desktop', 1280, 800],
  ['phone', 390, 844],
] as const;

/** The transport tile once it shows `health`, checked and shot in each theme and size. */
async function checkTile(world: World, name: string, health: string, shot: string): Promise<void> {
  for (const theme of ['light', 'dark'] as const)
    for (const [size, width, height] of SIZES) {
      const { context, page } = await world.page({ colorScheme: theme, width, height });
      try {
        await signIn(page, world.url, world.token);
        const tile = page.getByRole('region', { name: 'Transport' });
        await tile.getByText(health, { exact: true }).waitFor();
        assert.equal(await tile.locator('strong').first().textContent(), name);
        assert.deepEqual(await seriousViolations(page), [], `${shot} ${theme} ${size}`);
        await page.screenshot({ path: `${ARTIFACTS}overview-transport-${shot}-${theme}-${size}.png`, fullPage: true });
      } finally {
        await context.close();
      }
    }
}

/** The tile's lines under its heading. */
const facts = async (page: Page): Promise<string[]> =>
  page.getByRole('region', { name: 'Transport' }).locator('p').allTextContents();

describe('transport tile, postgres', () => {
  let world: World;
  after(async () => world?.stop());

  test('the overview names the PostgreSQL transport, connected', async () => {
    world = await startWorld();
    await checkTile(world, 'PostgreSQL', 'connected', 'postgres');
  });
});

describe('transport tile, rabbitmq', () => {
  const prefix = testPrefix();
  let world: World;
  after(async () => {
    await world?.stop();
    await deleteTopology(prefix, 2);
  });

  test('the overview names the RabbitMQ transport, connected, with the queue depth and the counters', async () => {
    world = await startWorld({
      TIDINGS_TRANSPORT: 'rabbitmq',
      TIDINGS_RABBITMQ_URL: RABBITMQ_URL,
      TIDINGS_BROKER_PREFIX: prefix,
      TIDINGS_BROKER_SHARDS: '2',
    });
    await checkTile(world, 'RabbitMQ', 'connected', 'rabbitmq');
    const { context, page } = await world.page();
    try {
      await signIn(page, world.url, world.token);
      await page.getByRole('region', { name: 'Transport' }).getByText('connected', { exact: true }).waitFor();
      const lines = await facts(page);
      assert.equal(lines[0], 'RabbitMQ connected');
      assert.match(lines[1] ?? '', /^\d+ waiting in the broker$/);
      assert.ok(
        lines.some((l) => /^\d+ published · \d+ not confirmed$/.test(l)),
        lines.join(' | '),
      );
      assert.ok(
        lines.some((l) => /^\d+ swept \(published again\)$/.test(l)),
        lines.join(' | '),
      );
    } finally {
      await context.close();
    }
  });
});
