import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { classifyAttempt, type Classification, type SendResult } from './attempt-outcome.ts';
import { ERROR_KINDS, ErrorKind } from './error-kinds.ts';

function response(statusCode: number, extra: Partial<Extract<SendResult, { type: 'response' }>> = {}): SendResult {
  return {
    type: 'response',
    statusCode,
    location: null,
    retryAfter: null,
    bodyPrefix: '',
    bodyError: null,
    durationMs: 20,
    ...extra,
  };
}

const delivered = (statusCode: number): Classification => ({ verdict: 'delivered', errorKind: null, statusCode });
const retryable = (statusCode: number, errorKind: ErrorKind = ErrorKind.httpStatus): Classification => ({
  verdict: 'retryable',
  errorKind,
  statusCode,
});

test('status codes: 2xx delivered, 410 gone, 3xx redirect, every other status retryable as http_status', () => {
  const table: [SendResult, Classification, string][] = [
    [response(200), delivered(200), '200 OK'],
    [response(201), delivered(201), '201 Created'],
    [response(202), delivered(202), '202 Accepted'],
    [response(204), delivered(204), '204 No Content'],
    [response(299), delivered(299), 'top of the 2xx range'],
    [
      response(200, { bodyError: ErrorKind.timeoutBody, bodyPrefix: 'partial' }),
      delivered(200),
      '2xx whose body timed out',
    ],
    [response(200, { bodyError: ErrorKind.tooLarge }), delivered(200), '2xx whose body was cut at the byte cap'],
    [response(204, { bodyError: ErrorKind.reset }), delivered(204), '2xx whose connection reset during the body'],
    [response(300), retryable(300, ErrorKind.redirect), '300'],
    [
      response(301, { location: 'https://new.example/hook' }),
      retryable(301, ErrorKind.redirect),
      '301 with Location (never followed)',
    ],
    [response(302, { location: '/elsewhere' }), retryable(302, ErrorKind.redirect), '302'],
    [response(307), retryable(307, ErrorKind.redirect), '307'],
    [response(308), retryable(308, ErrorKind.redirect), '308'],
    [response(399), retryable(399, ErrorKind.redirect), 'top of the 3xx range'],
    [response(400), retryable(400), '400'],
    [response(401), retryable(401), '401'],
    [response(403), retryable(403), '403'],
    [response(404), retryable(404), '404'],
    [response(408, { retryAfter: '5' }), retryable(408), '408 Request Timeout'],
    [response(409), retryable(409), '409'],
    [response(410), { verdict: 'gone', errorKind: ErrorKind.httpStatus, statusCode: 410 }, '410 Gone'],
    [
      response(410, { retryAfter: '60' }),
      { verdict: 'gone', errorKind: ErrorKind.httpStatus, statusCode: 410 },
      '410 with Retry-After is still gone',
    ],
    [response(413), retryable(413), '413'],
    [response(422), retryable(422), '422'],
    [response(429, { retryAfter: '30' }), retryable(429), '429 Too Many Requests'],
    [response(451), retryable(451), '451'],
    [response(500), retryable(500), '500'],
    [response(502), retryable(502), '502'],
    [response(503, { retryAfter: '120' }), retryable(503), '503'],
    [response(504), retryable(504), '504'],
    [response(599), retryable(599), '599'],
    [response(500, { bodyError: ErrorKind.timeoutBody }), retryable(500), 'a 5xx whose body timed out is a 5xx'],
    [response(199), retryable(199), 'a stray 1xx final status is not a delivery'],
  ];
  for (const [result, expected, why] of table) assert.deepEqual(classifyAttempt(result), expected, why);
});

test('every transport error kind is retryable with its own kind and no status', () => {
  const transportKinds = ERROR_KINDS.filter((k) => k !== ErrorKind.httpStatus);
  assert.deepEqual(
    [...transportKinds].sort(),
    [
      'blocked_address',
      'connect_refused',
      'deadline',
      'dns',
      'protocol',
      'receiver_auth',
      'redirect',
      'reset',
      'timeout_body',
      'timeout_connect',
      'timeout_headers',
      'tls',
      'too_large',
    ].sort(),
  );
  for (const errorKind of transportKinds) {
    const result: SendResult = { type: 'error', errorKind, detail: `simulated ${errorKind}`, durationMs: 5 };
    assert.deepEqual(classifyAttempt(result), { verdict: 'retryable', errorKind, statusCode: null }, errorKind);
  }
});

test('the error kinds are the single list of docs/design.md#delivery-lifecycle, frozen, in catalog order', () => {
  assert.deepEqual(ERROR_KINDS, [
    'http_status',
    'timeout_connect',
    'timeout_headers',
    'timeout_body',
    'deadline',
    'connect_refused',
    'reset',
    'dns',
    'tls',
    'blocked_address',
    'too_large',
    'redirect',
    'protocol',
    'receiver_auth',
  ]);
  assert.ok(Object.isFrozen(ERROR_KINDS));
  assert.ok(Object.isFrozen(ErrorKind));
});

test('classification ignores duration, body text and Location: only status and error kind decide', () => {
  const a = classifyAttempt(response(503, { durationMs: 1, bodyPrefix: 'x' }));
  const b = classifyAttempt(
    response(503, { durationMs: 99_999, bodyPrefix: 'a much longer body', location: 'https://x.example/' }),
  );
  assert.deepEqual(a, b);
});
