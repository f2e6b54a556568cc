import assert from 'node:assert/strict';
import { test } from 'node:test';
import { encodeSecret, signatureHeadersFor } from '../domain/signing.ts';
import { checkSignature, parseHeaders, secretKey } from './signature-check.ts';

const key = Buffer.alloc(32, 9);
const secret = encodeSecret(key);
const NOW = 1_800_000_000;
const sign = (body: string, ts = NOW, set: 'webhook' | 'svix' | 'both' = 'webhook'): Record<string, string> => ({
  ...signatureHeadersFor(set, [key], 'msg_1', ts, Buffer.from(body)),
});

test('a request signed with the key verifies, under either header set', () => {
  for (const set of ['webhook', 'svix', 'both'] as const) {
    const v = checkSignature(sign('{"a":1}', NOW - 10, set), Buffer.from('{"a":1}'), secretKey(secret), NOW);
    assert.equal(v.ok, true, set);
  }
});

test('the bare base64 of a secret is accepted as the secret', () => {
  assert.deepEqual(secretKey(secret.slice('whsec_'.length)), key);
});

test('each failure has its reason', () => {
  const body = Buffer.from('{"a":1,"b":[1,2]}');
  const table: [string, Record<string, string>, Buffer, string][] = [
    ['stale', sign(body.toString(), NOW - 301), body, 'timestamp_stale'],
    ['future', sign(body.toString(), NOW + 301), body, 'timestamp_future'],
    [
      're-serialised JSON',
      sign(body.toString()),
      Buffer.from('{\n  "a": 1,\n  "b": [\n    1,\n    2\n  ]\n}'),
      'body_changed',
    ],
    ['CRLF', sign('a\nb'), Buffer.from('a\r\nb'), 'body_changed'],
    ['edited', sign(body.toString()), Buffer.from('{"a":2,"b":[1,2]}'), 'signature_mismatch'],
    ['not seconds', { ...sign(body.toString()), 'webhook-timestamp': '1.5' }, body, 'header_malformed'],
    ['no v1 entry', { ...sign(body.toString()), 'webhook-signature': 'v2,abc' }, body, 'header_malformed'],
    ['both sets disagree', { ...sign(body.toString()), 'svix-id': 'msg_2' }, body, 'header_malformed'],
    ['missing', { 'webhook-id': 'msg_1' }, body, 'header_missing'],
  ];
  for (const [what, headers, b, reason] of table) {
    const v = checkSignature(headers, b, key, NOW);
    assert.equal(v.ok ? 'ok' : v.reason, reason, what);
  }
});

test('a stale timestamp is reported only once the signature matches: a wrong secret is said first', () => {
  const v = checkSignature(sign('{}', NOW - 1000), Buffer.from('{}'), Buffer.alloc(32, 1), NOW);
  assert.equal(v.ok ? 'ok' : v.reason, 'signature_mismatch');
});

test('headers come from captured lines (request line skipped, body after a blank line ignored) or JSON', () => {
  assert.deepEqual(parseHeaders('POST /h HTTP/1.1\r\nWebhook-Id: msg_1\r\nX: a: b\r\n\r\nbody: not a header'), {
    'webhook-id': 'msg_1',
    x: 'a: b',
  });
  assert.deepEqual(parseHeaders('{"Webhook-Id":"msg_1"}'), { 'webhook-id': 'msg_1' });
});
