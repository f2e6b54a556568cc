/**
 * Receiver authentication on the endpoint page (docs/reference/api.md, "Receiver authentication"): a portal customer
 * saves basic credentials for their own endpoint and sees the password masked, never in full; the console shows an
 * endpoint's OAuth2 client and client certificate. Screenshots of the card in both themes at phone and desktop width.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { makeTestCertificates } from '../support/test-certificates.ts';
import { ARTIFACTS, signIn, startWorld, type World } from './harness.ts';

let world: World;
let app = '';
let endpoint = '';
let other = '';
let portal = '';
const PASSWORD = 'portal-password-0123456789';

before(async () => {
  world = await startWorld();
  app = (await world.api<{ id: string }>('POST', '/api/v1/app', { name: 'Auth Co' })).body.id;
  const create = async (path: string): Promise<string> =>
    (await world.api<{ id: string }>('POST', `/api/v1/app/${app}/endpoint`, { url: `https://hooks.example${path}` }))
      .body.id;
  endpoint = await create('/basic');
  other = await create('/oauth2');
  const certs = makeTestCertificates();
  const set = await world.api('PUT', `/api/v1/app/${app}/endpoint/${other}/auth`, {
    oauth2: {
      tokenUrl: 'https://idp.example.com/oauth/token',
      clientId: 'auth-co-webhooks',
      clientSecret: 'client-secret-0123456789',
      scope: 'webhooks:write',
      audience: 'https://hooks.example',
    },
    mtls: { certificate: certs.client.cert, key: certs.client.key, ca: certs.ca.cert },
  });
  assert.equal(set.status, 200);
  portal = (await world.api<{ url: string }>('POST', `/api/v1/auth/app-portal-access/${app}`, {})).body.url;
});

after(async () => {
  await world?.stop();
});

const cardOf = (page: import('playwright-core').Page) =>
  page.locator('section.card', { has: page.locator('h2', { hasText: 'Receiver authentication' }) });

test('a portal customer saves basic credentials for their endpoint; the page shows the password masked', async () => {
  const { context, page } = await world.page();
  try {
    await page.goto(portal);
    await page.getByRole('heading', { name: 'Endpoints', level: 1 }).waitFor();
    await page.evaluate((r) => {
      location.hash = r;
    }, `/endpoints/${endpoint}`);
    const card = cardOf(page);
    await card.getByText('None: requests carry the signature only.').waitFor({ timeout: 15_000 });
    await card.getByLabel('Authorization header').selectOption('basic');
    await card.getByLabel('User name').fill('acme-hooks');
    await card.getByLabel('Password').fill(PASSWORD);
    await card.getByRole('button', { name: 'Save receiver auth' }).click();
    const facts = card.locator('dl.facts');
    await facts.getByText('acme-hooks').waitFor({ timeout: 15_000 });
    assert.equal(await facts.locator('dd').first().textContent(), `acme-hooks · password ••••${PASSWORD.slice(-2)}`);
    assert.equal(await card.getByLabel('Password').inputValue(), '', 'the password field is cleared after saving');
    assert.equal((await page.content()).includes(PASSWORD), false, 'the password is nowhere on the page');
    const stored = await world.api<{ basic: { username: string } }>(
      'GET',
      `/api/v1/app/${app}/endpoint/${endpoint}/auth`,
    );
    assert.equal(stored.body.basic.username, 'acme-hooks');
  } finally {
    await context.close();
  }
});

test('basic stored, an mTLS CA added through the card: basic is still there, and Save says so', async () => {
  const certs = makeTestCertificates();
  const ep = (
    await world.api<{ id: string }>('POST', `/api/v1/app/${app}/endpoint`, { url: 'https://hooks.example/keep' })
  ).body.id;
  const basic = { username: 'kept-user', password: 'kept-password-0123456789' };
  assert.equal((await world.api('PUT', `/api/v1/app/${app}/endpoint/${ep}/auth`, { basic })).status, 200);
  const { context, page } = await world.page();
  try {
    await signIn(page, world.url, world.token);
    await page.evaluate((r) => {
      location.hash = r;
    }, `/apps/${app}/endpoints/${ep}`);
    const card = cardOf(page);
    await card.locator('dl.facts').getByText('kept-user').waitFor({ timeout: 15_000 });
    assert.equal(await card.getByLabel('Authorization header').inputValue(), 'basic', 'opens on the stored mode');
    assert.equal(await card.getByLabel('User name').inputValue(), 'kept-user');
    await card.locator('summary').click();
    await card.getByLabel("Receiver's CA (PEM, optional)").fill(certs.ca.cert);
    const says = (await card.getByRole('status', { name: 'What Save changes' }).textContent()) ?? '';
    assert.match(says, /^Save sets the receiver's CA; keeps HTTP basic unchanged\.$/);
    await card.screenshot({ path: join(ARTIFACTS, 'receiver-auth-patch-light-1280.png') });
    await card.getByRole('button', { name: 'Save receiver auth' }).click();
    await card.locator('dl.facts').getByText('CN=test-ca').waitFor({ timeout: 15_000 });
    const stored = await world.api<{ basic: { username: string; password: string } | null; mtls: unknown }>(
      'GET',
      `/api/v1/app/${app}/endpoint/${ep}/auth`,
    );
    assert.deepEqual(stored.body.basic, { username: 'kept-user', password: '••••89' }, 'basic kept');
    assert.notEqual(stored.body.mtls, null);
    // A key alone, with no certificate stored, is refused naming the certificate, not dropped.
    await card.getByLabel('Private key (PEM, unencrypted)').fill(certs.client.key);
    await card.getByRole('button', { name: 'Save receiver auth' }).click();
    await card.getByText(/mtls\.certificate/).waitFor({ timeout: 15_000 });
    await card.getByRole('button', { name: 'Remove HTTP basic' }).click();
    await page.waitForFunction(
      () => !Array.from(document.querySelectorAll('dl.facts dt')).some((d) => d.textContent === 'Basic'),
      undefined,
      { timeout: 15_000 },
    );
    const after = await world.api<{ basic: unknown; mtls: unknown }>('GET', `/api/v1/app/${app}/endpoint/${ep}/auth`);
    assert.equal(after.body.basic, null, 'Remove HTTP basic removed basic');
    assert.notEqual(after.body.mtls, null, 'and kept the CA');
  } finally {
    await context.close();
  }
});

for (const theme of ['light', 'dark'] as const) {
  for (const [width, height] of [
    [390, 844],
    [1280, 800],
  ] as const) {
    test(`the console's receiver-auth card, ${theme} theme, ${width} px wide`, async () => {
      const { context, page } = await world.page({ width, height, colorScheme: theme });
      try {
        await signIn(page, world.url, world.token);
        await page.evaluate((r) => {
          location.hash = r;
        }, `/apps/${app}/endpoints/${other}`);
        const card = cardOf(page);
        await card.locator('dl.facts').getByText('auth-co-webhooks').waitFor({ timeout: 15_000 });
        const text = (await card.locator('dl.facts').textContent()) ?? '';
        assert.match(text, /secret ••••89/);
        assert.match(text, /CN=sender/);
        assert.equal(await card.getByLabel('Authorization header').inputValue(), 'oauth2', 'opens on what is stored');
        assert.equal(await card.getByLabel('Client id').inputValue(), 'auth-co-webhooks');
        assert.equal(await card.locator('details').getAttribute('open'), '', 'the stored mTLS part shown open');
        await card.scrollIntoViewIfNeeded();
        const box = await card.boundingBox();
        assert.ok(box !== null && box.x >= 0 && box.x + box.width <= width + 1, 'the card fits the width');
        await card.screenshot({ path: join(ARTIFACTS, `receiver-auth-${theme}-${width}.png`) });
      } finally {
        await context.close();
      }
    });
  }
}
