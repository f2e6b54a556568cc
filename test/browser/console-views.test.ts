import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Page } from 'playwright-core';
import { ARTIFACTS, signIn, startReceiver, startWorld, type Receiver, type World } from './harness.ts';

let world: World;
let receiver: Receiver;
const ids = { app: '', ok: '', down: '', msg: '' };

/** Polls until `ready` holds (bounded: 150 × 100 ms). */
async function until(what: string, ready: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 150; i++) {
    if (await ready()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.fail(`never: ${what}`);
}

before(async () => {
  // One retry 10 ms after a failure, then a dead letter; the poll interval is 50 ms (shown on the settings page).
  world = await startWorld({ TIDINGS_RETRY_SCHEDULE: '10ms', TIDINGS_RETRY_JITTER: '0' });
  receiver = await startReceiver();
  receiver.byPath.set('/down', { status: 500, body: 'down', contentType: 'text/plain' });
  ids.app = (await world.api<{ id: string }>('POST', '/api/v1/app', { name: 'Views Co' })).body.id;
  await world.api('PUT', '/api/v1/event-type/invoice.paid', {
    description: 'An invoice was paid',
    schemas: {
      1: {
        type: 'object',
        required: ['invoice'],
        examples: [{ invoice: 1, customer: { id: 'c1' } }],
        properties: {
          invoice: { type: 'integer', description: 'Invoice number' },
          customer: {
            type: 'object',
            required: ['id'],
            properties: { id: { type: 'string' }, email: { type: 'string', format: 'email' } },
          },
        },
      },
    },
  });
  ids.ok = (
    await world.api<{ id: string }>('POST', `/api/v1/app/${ids.app}/endpoint`, { url: `${receiver.url}/ok` })
  ).body.id;
  ids.down = (
    await world.api<{ id: string }>('POST', `/api/v1/app/${ids.app}/endpoint`, { url: `${receiver.url}/down` })
  ).body.id;
  for (let i = 0; i < 3; i++)
    ids.msg = (
      await world.api<{ id: string }>('POST', `/api/v1/app/${ids.app}/msg`, {
        eventType: 'invoice.paid',
        payload: { invoice: i },
      })
    ).body.id;
  await until(
    'the failing deliveries are dead',
    async () =>
      (await world.api<{ data: unknown[] }>('GET', `/api/v1/app/${ids.app}/dead-letter`)).body.data.length === 3,
  );
  await world.api('POST', '/api/v1/api-key', { name: 'views service', appId: ids.app });
  // A task for the tasks page (nothing failed to that endpoint: it changes nothing).
  assert.equal(
    (
      await world.api('POST', `/api/v1/app/${ids.app}/endpoint/${ids.ok}/recover`, {
        since: new Date(Date.now() - 3_600_000).toISOString(),
      })
    ).status,
    202,
  );
});

after(async () => {
  await receiver?.close();
  await world?.stop();
});

/** Waits until the page's heading is shown and nothing is loading. */
async function settled(page: Page): Promise<void> {
  await page.locator('main h1').first().waitFor();
  await page.waitForFunction(() => document.querySelectorAll('.loading').length === 0, undefined, { timeout: 10_000 });
}

test(
  'the overview charts have a time axis (UTC) and draw failures beside successes; the endpoint page charts ' +
    'failed attempts',
  async () => {
    const { context, page } = await world.page();
    try {
      await signIn(page, world.url, world.token);
      const chart = page.locator('figure.series', { hasText: 'Attempts per second' });
      await chart.locator('rect.fill-bad').first().waitFor({ timeout: 15_000 });
      assert.ok((await chart.locator('rect.fill-ok').count()) > 0, 'successes are drawn');
      assert.deepEqual(await chart.locator('.legend li').allTextContents(), ['succeeded', 'failed']);
      const ticks = await chart.locator('.x-axis span').allTextContents();
      assert.equal(ticks.length, 3, ticks.join(' '));
      for (const t of ticks) assert.match(t, /^\d\d:\d\d$/);
      assert.notEqual(ticks[0], ticks[2], 'the axis runs from the first bucket to the last');
      assert.match((await chart.locator('figcaption').textContent()) ?? '', /failed .*times in UTC/);
      assert.match((await chart.locator('.y-axis span').first().textContent()) ?? '', /\/s$/);
      await page.screenshot({ path: `${ARTIFACTS}overview-charts.png`, fullPage: true });
      await page.evaluate((r) => {
        location.hash = r;
      }, `/apps/${ids.app}/endpoints/${ids.down}`);
      const failed = page.locator('figure.bars', { hasText: 'Failed attempts' });
      await failed.waitFor();
      assert.match((await failed.locator('.bar-value').first().textContent()) ?? '', /^6 of 6$/);
    } finally {
      await context.close();
    }
  },
);

test(
  "an event type's schema is shown as structure: fields (nested ones too) with type and whether required, and " +
    'its example pretty-printed',
  async () => {
    const { context, page } = await world.page();
    try {
      await signIn(page, world.url, world.token, '/event-types/invoice.paid');
      const fields = page.getByRole('table', { name: 'Fields of invoice.paid version 1' });
      await fields.waitFor();
      const rows = await fields
        .locator('tbody tr')
        .evaluateAll((trs) => trs.map((tr) => Array.from(tr.querySelectorAll('td'), (td) => td.textContent)));
      // In the stored order (PostgreSQL's jsonb: shorter keys first), nested fields under their object.
      assert.deepEqual(rows, [
        ['invoice', 'integer', 'required', 'Invoice number'],
        ['customer', 'object', 'optional', '—'],
        ['customer.id', 'string', 'required', '—'],
        ['customer.email', 'string (email)', 'optional', '—'],
      ]);
      const example = (await page.getByLabel('Example 1 of invoice.paid version 1').textContent()) ?? '';
      assert.deepEqual(JSON.parse(example), { invoice: 1, customer: { id: 'c1' } });
      assert.match(example, /^\{\n {2}"/, 'pretty-printed');
      assert.match(example, /\n {4}"id": "c1"\n/, 'nested values indented');
    } finally {
      await context.close();
    }
  },
);

/** Pages with tables: a name for the screenshot, the route. */
const tablePages = (): [string, string][] => [
  ['apps', '/apps'],
  ['endpoints', `/apps/${ids.app}/endpoints`],
  ['endpoint', `/apps/${ids.app}/endpoints/${ids.down}`],
  ['messages', `/apps/${ids.app}/messages`],
  ['message', `/apps/${ids.app}/messages/${ids.msg}`],
  ['timeline', `/apps/${ids.app}/messages/${ids.msg}/endpoints/${ids.down}`],
  ['dead-letters', `/apps/${ids.app}/dead-letters`],
  ['all-dead-letters', '/dead-letters'],
  ['api-keys', '/api-keys'],
  ['tasks', '/tasks'],
  ['settings', '/settings'],
  ['event-type', '/event-types/invoice.paid'],
];

test(
  'at phone width every table cell shows the name of its column (data-label, drawn before the value), in both ' +
    'themes',
  async () => {
    for (const theme of ['light', 'dark'] as const) {
      const { context, page } = await world.page({ width: 390, height: 844, colorScheme: theme });
      try {
        await signIn(page, world.url, world.token);
        const problems: string[] = [];
        for (const [name, route] of tablePages()) {
          await page.evaluate((r) => {
            location.hash = r;
          }, route);
          await settled(page);
          await page
            .locator('main table')
            .first()
            .waitFor({ timeout: 10_000 })
            .catch(() => assert.fail(`${route}: no table`));
          problems.push(
            ...(await page.evaluate(
              (r) =>
                Array.from(document.querySelectorAll('main table')).flatMap((table) => {
                  const heads = Array.from(table.querySelectorAll('thead th'), (th) => th.textContent ?? '');
                  return Array.from(table.querySelectorAll('tbody tr')).flatMap((tr) =>
                    Array.from(tr.querySelectorAll('td')).flatMap((td, i) => {
                      const label = td.getAttribute('data-label');
                      if (label === null)
                        return td.querySelector('input, button') === null
                          ? [`${r}: a cell of "${heads[i]}" has no label`]
                          : [];
                      const drawn = getComputedStyle(td, '::before').content;
                      return label === heads[i] && drawn === JSON.stringify(label)
                        ? []
                        : [`${r}: "${label}" under "${heads[i]}", drawn ${drawn}`];
                    }),
                  );
                }),
              route,
            )),
          );
          await page.screenshot({ path: `${ARTIFACTS}phone-${theme}-${name}.png`, fullPage: true });
          const wide = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
          if (wide > 0) problems.push(`${route}: the page is ${wide} px wider than the phone`);
        }
        assert.deepEqual(problems, []);
      } finally {
        await context.close();
      }
    }
  },
);

/** Names of settings whose words (between underscores) the page breaks across lines. */
const brokenNames = (page: Page): Promise<string[]> =>
  page.evaluate(() =>
    Array.from(document.querySelectorAll('main td[data-label="Variable"] code')).flatMap((code) => {
      const chars: { c: string; top: number }[] = [];
      const walker = document.createTreeWalker(code, NodeFilter.SHOW_TEXT);
      for (let node = walker.nextNode(); node !== null; node = walker.nextNode()) {
        for (let i = 0; i < (node.textContent ?? '').length; i++) {
          const range = document.createRange();
          range.setStart(node, i);
          range.setEnd(node, i + 1);
          chars.push({ c: node.textContent![i]!, top: Math.round(range.getBoundingClientRect().top) });
        }
      }
      const broken = chars.some(
        (ch, i) => i > 0 && ch.c !== '_' && chars[i - 1]!.c !== '_' && ch.top !== chars[i - 1]!.top,
      );
      return broken ? [code.textContent ?? ''] : [];
    }),
  );

test(
  'the settings page shows a changed duration and its default in the same units, and never breaks a name ' +
    'mid-word (desktop and phone)',
  async () => {
    for (const [width, height] of [
      [1280, 800],
      [390, 844],
    ] as const) {
      const { context, page } = await world.page({ width, height });
      try {
        await signIn(page, world.url, world.token, '/settings');
        const setting = (env: string) =>
          page
            .locator('main tbody tr')
            .filter({ has: page.locator('td[data-label="Variable"]', { hasText: new RegExp(`^${env}$`) }) });
        const row = setting('TIDINGS_POLL_INTERVAL');
        await row.waitFor();
        assert.equal(await row.locator('td[data-label="Value"] code').textContent(), '50 ms');
        assert.equal(await row.locator('td[data-label="Default"] code').textContent(), '1 s');
        const lease = setting('TIDINGS_LEASE');
        assert.equal(
          await lease.locator('td[data-label="Value"] code').textContent(),
          await lease.locator('td[data-label="Default"] code').textContent(),
        );
        assert.deepEqual(await brokenNames(page), [], `names broken mid-word at ${width} px`);
      } finally {
        await context.close();
      }
    }
  },
);
