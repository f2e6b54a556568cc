import { ErrorKind } from '../../domain/error-kinds.ts';

/**
 * Maps what undici, Node's net/tls and the guarded connector throw onto the one list of error kinds
 * (src/domain/error-kinds.ts, docs/design.md#delivery-lifecycle). docs/reference/error-kinds.md describes each kind.
 */

/** Why the sender itself stopped an attempt. */
export class AttemptStoppedError extends Error {
  readonly code: 'TIDINGS_DEADLINE' | 'TIDINGS_ABORTED' | 'TIDINGS_RESPONSE_TOO_LARGE';
  constructor(code: AttemptStoppedError['code'], message: string) {
    super(message);
    this.name = 'AttemptStoppedError';
    this.code = code;
  }
}

/** One classified failure: its kind and a short, single-line detail for the attempt row. */
export interface ClassifiedError {
  readonly errorKind: ErrorKind;
  readonly detail: string;
}

const DETAIL_MAX_CHARS = 300;

/** OpenSSL certificate verification codes that Node puts in `error.code`. */
const CERT_CODES = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_REVOKED',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'CERT_SIGNATURE_FAILURE',
  'HOSTNAME_MISMATCH',
  'INVALID_CA',
  'PATH_LENGTH_EXCEEDED',
  'INVALID_PURPOSE',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

const CONNECT_REFUSED_CODES = new Set([
  'ECONNREFUSED',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EADDRNOTAVAIL',
  'EHOSTDOWN',
  'ENETDOWN',
]);
const RESET_CODES = new Set([
  'ECONNRESET',
  'EPIPE',
  'ECONNABORTED',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'UND_ERR_DESTROYED',
  'UND_ERR_INFO',
  'HPE_INVALID_EOF_STATE',
]);

function codeOf(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : '';
}

function kindOf(error: unknown, code: string): ErrorKind {
  switch (code) {
    case 'TIDINGS_DEADLINE':
    case 'TIDINGS_ABORTED':
      return ErrorKind.deadline;
    case 'TIDINGS_RESPONSE_TOO_LARGE':
    case 'UND_ERR_HEADERS_OVERFLOW':
    case 'UND_ERR_RES_EXCEEDED_MAX_SIZE':
    case 'HPE_HEADER_OVERFLOW':
      return ErrorKind.tooLarge;
    case 'TIDINGS_BLOCKED_ADDRESS':
      return ErrorKind.blockedAddress;
    case 'TIDINGS_DNS':
    case 'TIDINGS_REFUSED_NAME':
      return ErrorKind.dns;
    case 'UND_ERR_CONNECT_TIMEOUT':
    case 'ETIMEDOUT':
      return ErrorKind.timeoutConnect;
    case 'UND_ERR_HEADERS_TIMEOUT':
      return ErrorKind.timeoutHeaders;
    case 'UND_ERR_BODY_TIMEOUT':
      return ErrorKind.timeoutBody;
    case 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH':
      // The connection ended before the announced Content-Length (llhttp reads surplus bytes as the next
      // message, so a mismatch is always a cut body).
      return ErrorKind.reset;
    default:
      break;
  }
  if (CONNECT_REFUSED_CODES.has(code)) return ErrorKind.connectRefused;
  // 'bad response' / 'bad upgrade' are undici's words for an unsolicited 100 Continue or 101 Switching.
  if (code === 'UND_ERR_SOCKET' && /^bad /.test((error as Error).message)) return ErrorKind.protocol;
  if (RESET_CODES.has(code)) return ErrorKind.reset;
  if (code.startsWith('ERR_SSL_') || code.startsWith('ERR_TLS_') || code === 'EPROTO' || CERT_CODES.has(code))
    return ErrorKind.tls;
  // undici's HTTPParserError (malformed status line or headers) often carries no code; its name is stable.
  if (code.startsWith('HPE_') || (error as Error | null)?.name === 'HTTPParserError') return ErrorKind.protocol;
  if ((error as { library?: unknown } | null)?.library === 'SSL routines') return ErrorKind.tls;
  // Anything else (an undici argument error, an unknown network code) is still a failed attempt; the
  // detail carries the code so it can be given a kind of its own if it turns out to matter.
  return ErrorKind.protocol;
}

/**
 * Classifies an error that ended an attempt. Never throws; any value is accepted.
 *
 * - our own stops: deadline or caller abort → `deadline`; byte cap → `too_large`;
 * - guarded connector: a refused literal address or peer → `blocked_address`; a failed lookup, and a name that
 *   resolved to a refused address → `dns` (alike for the tenant; the sender keeps the difference for the operator);
 * - undici timers: connect → `timeout_connect`, headers → `timeout_headers`, body → `timeout_body`;
 * - headers over the size cap → `too_large`;
 * - ECONNREFUSED / unreachable → `connect_refused`; ECONNRESET, EPIPE, closed socket, a body shorter than its
 *   Content-Length → `reset`;
 * - OpenSSL and certificate errors → `tls`; malformed HTTP (parser errors, unsolicited 100/101) → `protocol`.
 */
export function classifyError(error: unknown): ClassifiedError {
  const code = codeOf(error);
  const message = error instanceof Error ? error.message : String(error);
  const label = code === '' && error instanceof Error ? error.name : code;
  const detail = `${label === '' ? '' : `${label}: `}${message}`.replace(/\s+/g, ' ').slice(0, DETAIL_MAX_CHARS);
  return { errorKind: kindOf(error, code), detail };
}
