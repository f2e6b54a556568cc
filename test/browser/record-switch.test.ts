import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Page } from 'playwright-core';
import { signIn, startReceiver, startWorld, type Receiver, type World } from './harness.ts';

/**
 * Regression: going from one record's page to another's of the same kind — by address, a bookmark, back or
 * forward — left the first record's values in the forms under the second one's heading, and Save wrote them
 * onto the second record. Every page that edits something is checked: each form holds the values of the
 * record the page names, after each move, and saving writes nothing of the other record.
 */

let world: World;
let receiver: Receiver;
const x = { app: '', a: '', b: '' };
const y = { app: '' };
let portal = '';

before(async () => {
  world = await startWorld();
  receiver = await startReceiver();
  x.app = (
    await world.api<{ id: string }>('POST', '/api/v1/app', { name: 'Xylo Inc', uid: 'xylo', rateLimit: 11 })
  ).body.id;
  y.app = (await world.api<{ id: string }>('POST', '/api/v1/app', { name: 'Yonder Ltd' })).body.id;
  x.a = (
    await world.api<{ id: string }>('POST', `/api/v1/app/${x.app}/endpoint`, {
      url: `${receiver.url}/alpha`,
      description: 'Alpha service',
      filterTypes: ['alpha.done'],
      channels: ['eu'],
    })
  ).body.id;
  x.b = (
    await world.api<{ id: string }>('POST', `/api/v1/app/${x.app}/endpoint`, { url: `${receiver.url}/beta` })
  ).body.id;
  assert.equal(
    (
      await world.api('PATCH', `/api/v1/app/${x.app}/endpoint/${x.a}/limits`, {
        maxInFlight: 2,
        rateLimit: 3,
        rateBurst: 4,
      })
    ).status,
    200,
  );
  assert.equal(
    (await world.api('PATCH', `/api/v1/app/${x.app}/endpoint/${x.a}/headers`, { headers: { 'x-alpha': 'one' } }))
      .status,
    204,
  );
  assert.equal(
    (await world.api('PATCH', `/api/v1/app/${x.app}/endpoint/${x.b}/headers`, { headers: { 'x-beta': 'two' } })).status,
    204,
  );
  await world.api('PUT', '/api/v1/event-type/alpha.done', {
    description: 'Alpha finished',
    schemas: { 1: { type: 'object', properties: { a: { type: 'string' } }, examples: [{ a: 'x' }] } },
  });
  await world.api('PUT', '/api/v1/event-type/beta.done', { description: '' });
  portal = (await world.api<{ url: string }>('POST', `/api/v1/auth/app-portal-access/${x.app}`, {})).body.url;
});

after(async () => {
  await receiver?.close();
  await world?.stop();
});

/** Goes to `route` by address (a bookmark or a typed URL: the fragment changes, the page is not reloaded). */
const go = (page: Page, route: string): Promise<void> =>
  page.evaluate((r) => {
    location.hash = r;
  }, route);

/** Waits until the page's heading is `name` and nothing is loading. */
async function shown(page: Page, name: string): Promise<void> {
  await page.getByRole('heading', { level: 1, name, exact: true }).waitFor({ timeout: 10_000 });
  await page.waitForFunction(() => document.querySelectorAll('.loading').length === 0, undefined, { timeout: 10_000 });
}

const text = (n: number | null): string => (n === null ? '' : String(n));

/** Every form of an endpoint page, against the endpoint `id` as the API has it. */
async function assertEndpointForms(page: Page, id: string, writable: boolean): Promise<void> {
  const path = `/api/v1/app/${x.app}/endpoint/${id}`;
  const ep = (
    await world.api<{ url: string; description: string; filterTypes: string[] | null; channels: string[] | null }>(
      'GET',
      path,
    )
  ).body;
  const limits = (
    await world.api<{ limits: { maxInFlight: number | null; rateLimit: number | null; rateBurst: number | null } }>(
      'GET',
      `${path}/health`,
    )
  ).body.limits;
  const headers = (await world.api<{ headers: Record<string, string> }>('GET', `${path}/headers`)).body.headers;
  await shown(page, ep.url);
  assert.equal(await page.locator('main header code').first().textContent(), id, 'the heading names the endpoint');
  if (writable) {
    const settings = page.locator('section[aria-labelledby="edit-h"]');
    assert.deepEqual(
      {
        url: await settings.getByLabel('URL').inputValue(),
        description: await settings.getByLabel('Description').inputValue(),
        types: await settings.getByLabel('Event types').inputValue(),
        channels: await settings.getByLabel('Channels').inputValue(),
      },
      {
        url: ep.url,
        description: ep.description,
        types: (ep.filterTypes ?? []).join(', '),
        channels: (ep.channels ?? []).join(', '),
      },
      `Settings of ${id}`,
    );
    const form = page.locator('section[aria-labelledby="limits-h"]');
    assert.deepEqual(
      {
        max: await form.getByLabel('Requests in flight at most').inputValue(),
        rate: await form.getByLabel('Rate, requests per second').inputValue(),
        burst: await form.getByLabel('Burst, requests').inputValue(),
      },
      { max: text(limits.maxInFlight), rate: text(limits.rateLimit), burst: text(limits.rateBurst) },
      `Limits of ${id}`,
    );
  }
  const listed = (
    await page.locator('section[aria-labelledby="headers-h"] li code:first-child').allTextContents()
  ).sort();
  assert.deepEqual(listed, Object.keys(headers).sort(), `Custom headers of ${id}`);
  assert.equal(
    await page.locator('pre[aria-label="Signing secret"]').count(),
    0,
    `no other endpoint's secret is shown on ${id}`,
  );
}

test(
  'the console endpoint page: moving between two endpoints by address, back and forward, every form holds the ' +
    'endpoint shown, and Save writes only its own values',
  async () => {
    const { context, page } = await world.page();
    try {
      const a = `/apps/${x.app}/endpoints/${x.a}`;
      const b = `/apps/${x.app}/endpoints/${x.b}`;
      await signIn(page, world.url, world.token, a);
      await assertEndpointForms(page, x.a, true);
      await page.getByRole('button', { name: 'Reveal secret' }).click();
      await page.locator('pre[aria-label="Signing secret"]').waitFor();
      await go(page, b);
      await assertEndpointForms(page, x.b, true);
      await page.goBack();
      await assertEndpointForms(page, x.a, true);
      await page.goForward();
      await assertEndpointForms(page, x.b, true);
      const before = await world.api('GET', `/api/v1/app/${x.app}/endpoint/${x.b}`);
      await page.getByRole('button', { name: 'Save settings' }).click();
      await page.getByRole('button', { name: 'Save limits' }).click();
      await page.waitForFunction(() => document.querySelectorAll('[aria-busy="true"]').length === 0);
      await page.waitForFunction(() => document.querySelectorAll('.loading').length === 0);
      const saved = await world.api<{
        url: string;
        description: string;
        filterTypes: string[] | null;
        channels: string[] | null;
      }>('GET', `/api/v1/app/${x.app}/endpoint/${x.b}`);
      const { updatedAt: _u1, ...was } = before.body as Record<string, unknown>;
      const { updatedAt: _u2, ...now } = saved.body as Record<string, unknown>;
      assert.deepEqual(now, was, "saving B's page wrote none of A's values onto B");
      const limits = await world.api<{ limits: unknown }>('GET', `/api/v1/app/${x.app}/endpoint/${x.b}/health`);
      assert.deepEqual(limits.body.limits, { maxInFlight: null, rateLimit: null, rateBurst: null });
    } finally {
      await context.close();
    }
  },
);

test(
  'the portal endpoint page: moving between two endpoints by address, back and forward, every form holds the ' +
    'endpoint shown',
  async () => {
    const { context, page } = await world.page();
    try {
      await page.goto(portal);
      await page.locator('nav[aria-label="Main"]').waitFor();
      await go(page, `/endpoints/${x.a}`);
      await assertEndpointForms(page, x.a, true);
      await go(page, `/endpoints/${x.b}`);
      await assertEndpointForms(page, x.b, true);
      await page.goBack();
      await assertEndpointForms(page, x.a, true);
      await page.goForward();
      await assertEndpointForms(page, x.b, true);
    } finally {
      await context.close();
    }
  },
);

/** The event type editor against the type `name` as the API has it. */
async function assertTypeEditor(page: Page, name: string): Promise<void> {
  const t = (
    await world.api<{ description: string; schemas: Record<string, unknown> | null }>(
      'GET',
      `/api/v1/event-type/${name}`,
    )
  ).body;
  await shown(page, name);
  const form = page.getByRole('form', { name: 'Event type editor' });
  assert.equal(await form.getByRole('heading').textContent(), `Edit ${name}`);
  assert.equal(await form.getByLabel('Name').inputValue(), name);
  assert.equal(await form.getByLabel('Description').inputValue(), t.description, `description of ${name}`);
  const schemas = await form.getByLabel(/JSON Schemas by version/).inputValue();
  assert.deepEqual(schemas.trim() === '' ? null : JSON.parse(schemas), t.schemas, `schemas of ${name}`);
}

test(
  'the event type editor: moving between two event types by address, back and forward, the editor holds the type ' +
    'shown (never the previous description)',
  async () => {
    const { context, page } = await world.page();
    try {
      await signIn(page, world.url, world.token, '/event-types/alpha.done');
      await assertTypeEditor(page, 'alpha.done');
      await go(page, '/event-types/beta.done');
      await assertTypeEditor(page, 'beta.done');
      await page.goBack();
      await assertTypeEditor(page, 'alpha.done');
      await page.goForward();
      await assertTypeEditor(page, 'beta.done');
      await page.getByRole('button', { name: 'Check and save' }).click();
      await page.getByText('Saved: the schemas compile').waitFor();
      const beta = await world.api<{ description: string; schemas: unknown }>('GET', '/api/v1/event-type/beta.done');
      assert.equal(beta.body.description, '', "saving beta wrote none of alpha's description");
      assert.equal(beta.body.schemas, null);
    } finally {
      await context.close();
    }
  },
);

/** The application settings form against the application `id` as the API has it. */
async function assertAppForm(page: Page, id: string): Promise<void> {
  const app = (
    await world.api<{ name: string; uid: string | null; rateLimit: number | null }>('GET', `/api/v1/app/${id}`)
  ).body;
  await shown(page, app.name);
  const form = page.locator('section[aria-labelledby="app-form-h"]');
  assert.deepEqual(
    {
      name: await form.getByLabel('Name').inputValue(),
      uid: await form.getByLabel(/^Uid/).inputValue(),
      rate: await form.getByLabel(/^Rate limit/).inputValue(),
    },
    { name: app.name, uid: app.uid ?? '', rate: text(app.rateLimit) },
    `settings of ${id}`,
  );
}

test(
  'the application settings page: moving between two applications by address, back and forward, the form holds ' +
    'the application shown, and Save writes only its own values',
  async () => {
    const { context, page } = await world.page();
    try {
      await signIn(page, world.url, world.token, `/apps/${x.app}/settings`);
      await assertAppForm(page, x.app);
      await go(page, `/apps/${y.app}/settings`);
      await assertAppForm(page, y.app);
      await page.goBack();
      await assertAppForm(page, x.app);
      await page.goForward();
      await assertAppForm(page, y.app);
      await page.getByRole('button', { name: 'Save application' }).click();
      await page.waitForFunction(() => document.querySelectorAll('[aria-busy="true"]').length === 0);
      const saved = await world.api<{ name: string; uid: string | null; rateLimit: number | null }>(
        'GET',
        `/api/v1/app/${y.app}`,
      );
      assert.deepEqual([saved.body.name, saved.body.uid, saved.body.rateLimit], ['Yonder Ltd', null, null]);
    } finally {
      await context.close();
    }
  },
);
