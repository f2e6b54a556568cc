import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AppError } from '../domain/errors.ts';
import { payloadBytes } from './payload-span.ts';

test('payloadBytes returns the exact bytes of the payload value: whitespace, key order, number forms, escapes, non-ASCII', () => {
  const payload = '{ "b" : 1e2,\n "a":[ 12345678901234567890 , -0.0 ], "s":"\\u00e9é\\"}" }';
  assert.equal(payloadBytes(`{"eventType":"x","payload":${payload},"eventId":"e"}`).toString('utf8'), payload);
  assert.deepEqual(payloadBytes(`{"payload":${payload}}`), Buffer.from(payload, 'utf8'));
});

test('payloadBytes handles any JSON value and nested "payload" keys do not count', () => {
  assert.equal(payloadBytes('{"payload":"text"}').toString(), '"text"');
  assert.equal(payloadBytes('{"payload":null}').toString(), 'null');
  assert.equal(payloadBytes('{"payload":  [ 1 ]  }').toString(), '[ 1 ]');
  assert.equal(payloadBytes('{"x":{"payload":1},"payload":2}').toString(), '2');
  assert.equal(payloadBytes('{"pay\\u006coad":{"k":1}}').toString(), '{"k":1}');
});

test('payloadBytes refuses a missing or duplicated payload key with 422 on body.payload', () => {
  for (const body of ['{"eventType":"x"}', '{"payload":1,"payload":2}', '[1]', '{"x":{"payload":1}}']) {
    assert.throws(() => payloadBytes(body), (e: unknown) => e instanceof AppError && e.code === 'validation' && JSON.stringify(e.detail).includes('"loc":["body","payload"]'), body);
  }
});
