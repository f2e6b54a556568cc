import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { SendResult } from '../../domain/attempt-outcome.ts';
import { basicAuthorization, redactResult } from './receiver-auth-send.ts';

const response = (bodyPrefix: string, location: string | null = null): SendResult => ({
  type: 'response',
  statusCode: 200,
  location,
  retryAfter: null,
  bodyPrefix,
  bodyError: null,
  durationMs: 1,
});

test('the basic credentials are redacted in every form a receiver may echo', () => {
  const authorization = basicAuthorization({ username: 'hooks', password: 'pa55-word' });
  const b64 = authorization.slice('Basic '.length);
  const out = redactResult(response(`${authorization} | ${b64} | hooks:pa55-word`, `/x?a=${b64}`), authorization);
  assert.equal(out.type === 'response' && out.bodyPrefix, '•••• | •••• | ••••');
  assert.equal(out.type === 'response' && out.location, '/x?a=••••');
});

test('a bearer token cut by the stored prefix is redacted too', () => {
  const out = redactResult(response('{"seen":"Bearer tok-abcdefgh'), 'Bearer tok-abcdefghijklmnop');
  assert.equal(out.type === 'response' && out.bodyPrefix, '{"seen":"••••');
});

test('an error result, or none added, is left as it is', () => {
  const error: SendResult = { type: 'error', errorKind: 'reset', detail: 'x', durationMs: 1 };
  assert.equal(redactResult(error, 'Bearer t'), error);
  const plain = response('Bearer t');
  assert.equal(redactResult(plain, undefined), plain);
});
