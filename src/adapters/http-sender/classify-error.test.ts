import { test } from 'node:test';
import assert from 'node:assert/strict';
import { errors } from 'undici';
import { ERROR_KINDS, type ErrorKind } from '../../domain/error-kinds.ts';
import { AttemptStoppedError, classifyError } from './classify-error.ts';
import { BlockedAddressError, DnsLookupError, RefusedNameError } from './guarded-connect.ts';

const withCode = (code: string, message = code): Error => Object.assign(new Error(message), { code });

/** [what was thrown, the kind it must map to]. The integration tests produce most of these for real. */
const TABLE: readonly (readonly [string, unknown, ErrorKind])[] = [
  ['our deadline', new AttemptStoppedError('TIDINGS_DEADLINE', 'deadline'), 'deadline'],
  ['a caller abort', new AttemptStoppedError('TIDINGS_ABORTED', 'aborted'), 'deadline'],
  ['our body cap', new AttemptStoppedError('TIDINGS_RESPONSE_TOO_LARGE', 'too large'), 'too_large'],
  ['the SSRF guard', new BlockedAddressError('10.0.0.1 is refused'), 'blocked_address'],
  ['a name that resolved to a refused address', new RefusedNameError('vm.internal resolved to 10.0.0.5'), 'dns'],
  ['a failed lookup', new DnsLookupError('lookup failed', { cause: withCode('ENOTFOUND') }), 'dns'],
  ['undici connect timeout', new errors.ConnectTimeoutError(), 'timeout_connect'],
  ['an OS connect timeout', withCode('ETIMEDOUT'), 'timeout_connect'],
  ['undici headers timeout', new errors.HeadersTimeoutError(), 'timeout_headers'],
  ['undici body timeout', new errors.BodyTimeoutError(), 'timeout_body'],
  ['undici header overflow', new errors.HeadersOverflowError(), 'too_large'],
  ['undici response size cap', new errors.ResponseExceededMaxSizeError(), 'too_large'],
  ['a refused connection', withCode('ECONNREFUSED'), 'connect_refused'],
  ['an unreachable host', withCode('EHOSTUNREACH'), 'connect_refused'],
  ['an unreachable network', withCode('ENETUNREACH'), 'connect_refused'],
  ['a reset', withCode('ECONNRESET'), 'reset'],
  ['a broken pipe', withCode('EPIPE'), 'reset'],
  ['the other side closed', new errors.SocketError('other side closed'), 'reset'],
  ['a body cut short of its Content-Length', new errors.ResponseContentLengthMismatchError(), 'reset'],
  ['an unsolicited 100 Continue', new errors.SocketError('bad response'), 'protocol'],
  ['an unsolicited upgrade', new errors.SocketError('bad upgrade'), 'protocol'],
  [
    'a parser error without a code',
    new errors.HTTPParserError('Response does not match the HTTP/1.1 protocol (Invalid status code)'),
    'protocol',
  ],
  ['a parser error with a code', withCode('HPE_INVALID_HEADER_TOKEN'), 'protocol'],
  ['plain HTTP on an https port', withCode('ERR_SSL_WRONG_VERSION_NUMBER'), 'tls'],
  ['an OpenSSL protocol error', withCode('EPROTO'), 'tls'],
  ['a self-signed certificate', withCode('DEPTH_ZERO_SELF_SIGNED_CERT'), 'tls'],
  ['an expired certificate', withCode('CERT_HAS_EXPIRED'), 'tls'],
  ['a certificate for another name', withCode('ERR_TLS_CERT_ALTNAME_INVALID'), 'tls'],
  ['an unknown code', withCode('EWHATEVER'), 'protocol'],
  ['an error without a code', new Error('odd'), 'protocol'],
  ['a thrown string', 'not an error', 'protocol'],
  ['a thrown null', null, 'protocol'],
];

for (const [label, thrown, kind] of TABLE) {
  test(`${label} is classified as ${kind}`, () => {
    const classified = classifyError(thrown);
    assert.equal(classified.errorKind, kind);
    assert.ok(ERROR_KINDS.includes(classified.errorKind));
    assert.ok(
      classified.detail.length > 0 && classified.detail.length <= 300 && !/[\r\n]/.test(classified.detail),
      classified.detail,
    );
  });
}

test('the detail names the code and is one bounded line', () => {
  const classified = classifyError(withCode('ECONNRESET', `read ECONNRESET\n${'x'.repeat(1000)}`));
  assert.match(classified.detail, /^ECONNRESET: read ECONNRESET x+$/);
  assert.equal(classified.detail.length, 300);
});
