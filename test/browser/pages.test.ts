import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import { mkdir, readFile } from 'node:fs/promises';
import { after, before, test } from 'node:test';
import {
  ARTIFACTS,
  DOC_SHOTS,
  seriousViolations,
  signIn,
  startReceiver,
  startWorld,
  type Receiver,
  type World,
} from './harness.ts';
import { WEB_DIST_DIR } from '../../src/http/plugins/web-ui.ts';

/** Initial JavaScript budget of each mode, gzipped (ADR 0012). */
const INITIAL_JS_BUDGET_BYTES = 100 * 1024;

let world: World;
let receiver: Receiver;
const ids = { app: '', emptyApp: '', ep: '', msg: '', portal: '' };

before(async () => {
  world = await startWorld();
  receiver = await startReceiver();
  const app = await world.api<{ id: string }>('POST', '/api/v1/app', { name: 'Acme Corp', uid: 'acme' });
  ids.app = app.body.id;
  ids.emptyApp = (await world.api<{ id: string }>('POST', '/api/v1/app', { name: 'Empty Co', uid: 'empty' })).body.id;
  await world.api('PUT', '/api/v1/event-type/invoice.paid', {
    description: 'An invoice was paid',
    schemas: {
      1: {
        type: 'object',
        properties: { invoice: { type: 'integer' } },
        required: ['invoice'],
        examples: [{ invoice: 1 }],
      },
    },
  });
  ids.ep = (
    await world.api<{ id: string }>('POST', `/api/v1/app/${ids.app}/endpoint`, {
      url: `${receiver.url}/hooks`,
      description: 'Billing service',
    })
  ).body.id;
  await world.api('POST', `/api/v1/app/${ids.app}/endpoint`, {
    url: `${receiver.url}/other`,
    filterTypes: ['invoice.paid'],
  });
  for (let i = 0; i < 3; i++)
    ids.msg = (
      await world.api<{ id: string }>('POST', `/api/v1/app/${ids.app}/msg`, {
        eventType: 'invoice.paid',
        payload: { invoice: 1000 + i, amount: 4200 },
      })
    ).body.id;
  await world.api('POST', '/api/v1/api-key', { name: 'billing service', appId: ids.app });
  ids.portal = (await world.api<{ url: string }>('POST', `/api/v1/auth/app-portal-access/${ids.app}`, {})).body.url;
  // Wait until the deliveries are done so that the pages show a settled state.
  for (let i = 0; i < 100 && receiver.requests.length < 6; i++) await new Promise((r) => setTimeout(r, 50));
});

after(async () => {
  await receiver?.close();
  await world?.stop();
});

const consolePages = (): [string, string][] => [
  ['overview', '/'],
  ['applications', '/apps'],
  ['endpoints', `/apps/${ids.app}/endpoints`],
  ['endpoint', `/apps/${ids.app}/endpoints/${ids.ep}`],
  ['messages', `/apps/${ids.app}/messages`],
  ['message', `/apps/${ids.app}/messages/${ids.msg}`],
  ['timeline', `/apps/${ids.app}/messages/${ids.msg}/endpoints/${ids.ep}`],
  ['dead-letters', `/apps/${ids.app}/dead-letters`],
  ['all-dead-letters', '/dead-letters'],
  ['app-settings', `/apps/${ids.app}/settings`],
  ['event-types', '/event-types'],
  ['event-type', '/event-types/invoice.paid'],
  ['api-keys', '/api-keys'],
  ['tasks', '/tasks'],
  ['settings', '/settings'],
  ['empty-endpoints', `/apps/${ids.emptyApp}/endpoints`],
  ['empty-messages', `/apps/${ids.emptyApp}/messages`],
  ['empty-dead-letters', `/apps/${ids.emptyApp}/dead-letters`],
];
const portalPages = (): [string, string][] => [
  ['endpoints', '/endpoints'],
  ['endpoint', `/endpoints/${ids.ep}`],
  ['messages', '/messages'],
  ['message', `/messages/${ids.msg}`],
  ['timeline', `/messages/${ids.msg}/endpoints/${ids.ep}`],
  ['event-types', '/event-types'],
  ['event-type', '/event-types/invoice.paid'],
];
/**
 * Pages whose screenshot the README shows. They are rewritten in docs/screenshots/ only when
 * TIDINGS_UPDATE_SCREENSHOTS=1, so that a test run leaves the working tree as it found it.
 */
const README_SHOTS = new Set([
  'console-light-timeline',
  'console-dark-endpoint',
  'console-light-overview',
  'portal-light-endpoints',
]);

/** Waits until no loading indicator is left on the page. */
async function settled(page: import('playwright-core').Page): Promise<void> {
  await page.locator('main h1').first().waitFor();
  await page.waitForFunction(() => document.querySelectorAll('.loading').length === 0, undefined, { timeout: 10_000 });
}

async function shoot(page: import('playwright-core').Page, name: string): Promise<void> {
  const file = `${ARTIFACTS}${name}.png`;
  await page.screenshot({ path: file, fullPage: true });
  if (README_SHOTS.has(name) && process.env.TIDINGS_UPDATE_SCREENSHOTS === '1') {
    await mkdir(DOC_SHOTS, { recursive: true });
    await page.screenshot({ path: `${DOC_SHOTS}${name}.png` });
  }
}

for (const theme of ['light', 'dark'] as const) {
  test(
    `every console page, in the ${theme} theme, at desktop and phone width, has no serious or critical axe ` +
      'violation (screenshots saved)',
    async () => {
      for (const [width, height, tag] of [
        [1280, 800, ''],
        [390, 844, '-phone'],
      ] as const) {
        const { context, page } = await world.page({ colorScheme: theme, width, height });
        try {
          await signIn(page, world.url, world.token);
          const problems: string[] = [];
          for (const [name, route] of consolePages()) {
            await page.goto(`${world.url}/console#${route}`);
            await settled(page);
            await shoot(page, `console-${theme}${tag}-${name}`);
            for (const v of await seriousViolations(page)) problems.push(`${name}${tag}: ${v}`);
          }
          assert.deepEqual(problems, []);
        } finally {
          await context.close();
        }
      }
    },
  );

  test(
    `every portal page, in the ${theme} theme, at desktop and phone width, has no serious or critical axe ` +
      'violation',
    async () => {
      for (const [width, height, tag] of [
        [1280, 800, ''],
        [390, 844, '-phone'],
      ] as const) {
        const { context, page } = await world.page({ colorScheme: theme, width, height });
        try {
          await page.goto(ids.portal);
          await page.locator('nav[aria-label="Main"]').waitFor();
          const problems: string[] = [];
          for (const [name, route] of portalPages()) {
            await page.evaluate((r) => {
              location.hash = r;
            }, route);
            await settled(page);
            await shoot(page, `portal-${theme}${tag}-${name}`);
            for (const v of await seriousViolations(page)) problems.push(`${name}${tag}: ${v}`);
          }
          assert.deepEqual(problems, []);
        } finally {
          await context.close();
        }
      }
    },
  );
}

test('the console sign-in page and the missing-token portal page have no serious axe violation', async () => {
  const { context, page } = await world.page();
  try {
    await page.goto(`${world.url}/console`);
    await page.getByLabel('API token').waitFor();
    assert.deepEqual(await seriousViolations(page), []);
    await shoot(page, 'console-light-sign-in');
    await page.goto(`${world.url}/app-portal`);
    await page.locator('main h1').waitFor();
    assert.deepEqual(await seriousViolations(page), []);
  } finally {
    await context.close();
  }
});

test('the initial JavaScript of each mode is at most 100 KB gzipped', async () => {
  const manifest = JSON.parse(await readFile(`${WEB_DIST_DIR}.vite/manifest.json`, 'utf8')) as Record<
    string,
    { file: string; imports?: string[]; isEntry?: boolean }
  >;
  for (const entry of ['console.html', 'app-portal.html']) {
    // The entry chunk and every chunk it imports statically (loaded before the first render).
    const files = new Set<string>();
    const visit = (key: string): void => {
      const chunk = manifest[key];
      assert.ok(chunk !== undefined, `${key} is in the manifest`);
      if (files.has(chunk.file)) return;
      files.add(chunk.file);
      for (const imported of chunk.imports ?? []) visit(imported);
    };
    visit(entry);
    let gzipped = 0;
    for (const file of files) gzipped += gzipSync(await readFile(`${WEB_DIST_DIR}${file}`), { level: 9 }).length;
    console.log(`${entry}: ${files.size} chunk(s), initial JS ${(gzipped / 1024).toFixed(1)} KB gzipped`);
    assert.ok(gzipped <= INITIAL_JS_BUDGET_BYTES, `${entry}: ${gzipped} bytes gzipped > ${INITIAL_JS_BUDGET_BYTES}`);
  }
});
