import { strict as assert } from 'node:assert';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { Webhook as SvixWebhook } from 'svix';
import { encodeSecret } from '../../domain/signing.ts';
import type { ClaimedDelivery } from '../../ports/delivery-store.ts';
import { prepareRequest } from './attempt.ts';

const KEY = randomBytes(32);
const SECRET = encodeSecret(KEY);

function delivery(more: Partial<ClaimedDelivery> = {}): ClaimedDelivery {
  return {
    deliveryId: '1',
    fencingToken: '1',
    dispatcherId: 'w',
    appId: 'app_1',
    messageId: 'msg_1',
    endpointId: 'ep_1',
    eventType: 'e',
    attemptNumber: 1,
    manual: false,
    reclaimed: false,
    url: 'https://hooks.example/',
    payload: Buffer.from('{"a":1}'),
    contentType: null,
    signingKeys: [KEY],
    headers: {},
    ...more,
  };
}

/** The request's headers of one set (`webhook-*` or `svix-*`), as a verifier would read them. */
const only = (headers: Readonly<Record<string, string>>, prefix: string): Record<string, string> =>
  Object.fromEntries(Object.entries(headers).filter(([name]) => name.startsWith(`${prefix}-`)));

test(
  'TIDINGS_SIGNATURE_HEADERS picks the signature header set: both (default) carries webhook-* and svix-* with ' +
    'the same values, each alone only its own; svix and standardwebhooks verify every set',
  () => {
    const nowMs = Date.now();
    const both = prepareRequest(delivery(), nowMs);
    const names = (h: Readonly<Record<string, string>>) =>
      Object.keys(h)
        .filter((n) => /^(webhook|svix)-/.test(n))
        .sort();
    assert.deepEqual(names(both.headers), [
      'svix-id',
      'svix-signature',
      'svix-timestamp',
      'webhook-id',
      'webhook-signature',
      'webhook-timestamp',
    ]);
    for (const name of ['id', 'timestamp', 'signature'])
      assert.equal(both.headers[`svix-${name}`], both.headers[`webhook-${name}`]);
    assert.deepEqual(names(prepareRequest(delivery(), nowMs, 'webhook').headers), [
      'webhook-id',
      'webhook-signature',
      'webhook-timestamp',
    ]);
    assert.deepEqual(names(prepareRequest(delivery(), nowMs, 'svix').headers), [
      'svix-id',
      'svix-signature',
      'svix-timestamp',
    ]);
    for (const set of ['both', 'webhook', 'svix'] as const) {
      const { headers, body } = prepareRequest(delivery(), nowMs, set);
      if (set !== 'svix') {
        new StandardWebhook(SECRET).verify(Buffer.from(body), only(headers, 'webhook'), { jsonParse: false });
        new SvixWebhook(SECRET).verify(Buffer.from(body), only(headers, 'webhook'));
      }
      if (set !== 'webhook') new SvixWebhook(SECRET).verify(Buffer.from(body), only(headers, 'svix'));
    }
  },
);

test(
  'a raw message is sent with its own content type, a JSON payload as application/json; the body is the stored ' +
    'bytes',
  () => {
    const raw = prepareRequest(delivery({ payload: Buffer.from('plain'), contentType: 'text/plain' }), Date.now());
    assert.equal(raw.headers['content-type'], 'text/plain');
    assert.equal(Buffer.from(raw.body).toString('utf8'), 'plain');
    assert.equal(prepareRequest(delivery(), Date.now()).headers['content-type'], 'application/json');
  },
);
