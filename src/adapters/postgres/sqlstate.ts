import { AppError } from '../../domain/errors.ts';

/** SQLSTATE codes the adapters map (PostgreSQL Appendix A). Raw pg errors never escape the adapter. */
export const SqlState = Object.freeze({
  uniqueViolation: '23505',
  foreignKeyViolation: '23503',
  lockNotAvailable: '55P03',
  queryCanceled: '57014',
} as const);

/** The SQLSTATE of a pg error, or undefined. */
export function sqlState(error: unknown): string | undefined {
  return typeof error === 'object' &&
    error !== null &&
    'code' in error &&
    typeof (error as { code: unknown }).code === 'string'
    ? (error as { code: string }).code
    : undefined;
}

/** The constraint name of a pg error, or undefined. */
export function constraintOf(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'constraint' in error
    ? String((error as { constraint: unknown }).constraint)
    : undefined;
}

/** Network error codes of a connection to the database that cannot be made or was lost. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
]);
/** Messages of the pg driver and pool when the connection is gone or none can be had in time. */
const CONNECTION_MESSAGES = new RegExp(
  [
    'Connection terminated',
    'timeout exceeded when trying to connect',
    'Client has encountered a connection error',
    'Connection refused',
  ].join('|'),
  'i',
);

/**
 * True when `error` (or one of its causes) says the database cannot be reached: SQLSTATE class 08
 * (connection exception), 57P01–57P03 (shutdown / cannot connect now), or a network error. Such a request
 * changed nothing, so it is answered 503 `service_unavailable` and may be retried.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  for (
    let e: unknown = error, depth = 0;
    e !== null && typeof e === 'object' && depth < 8;
    e = (e as { cause?: unknown }).cause, depth++
  ) {
    const code = (e as { code?: unknown }).code;
    if (
      typeof code === 'string' &&
      (/^08[0-9A-Z]{3}$/.test(code) || /^57P0[1-3]$/.test(code) || NETWORK_CODES.has(code))
    )
      return true;
    if (e instanceof Error && CONNECTION_MESSAGES.test(e.message)) return true;
  }
  return false;
}

/**
 * SQLSTATEs of text the database cannot store, all from the request: 22021 a NUL character in a text value,
 * 22P05 a `\u0000` escape in a JSON value (PostgreSQL Appendix A). Answered 422 instead of a fault.
 */
const UNSTORABLE_TEXT_STATES = new Set(['22021', '22P05']);

/**
 * A database failure in the error catalogue's terms, for the HTTP error handler (which reads no SQLSTATE):
 * the database unreachable → AppError `service_unavailable` (503, `retry-after: 1`; such a request changed
 * nothing and may be retried); text it cannot store → AppError `validation` (422 at loc `body`); anything
 * else → null (a fault, unless the handler knows it otherwise).
 */
export function databaseErrorOf(error: unknown): AppError | null {
  if (isDatabaseUnavailable(error)) {
    return new AppError('service_unavailable', 'The database cannot be reached; nothing was changed. Retry later.', {
      cause: error,
      headers: { 'retry-after': '1' },
    });
  }
  if (UNSTORABLE_TEXT_STATES.has(String((error as { code?: unknown } | null)?.code))) {
    return new AppError(
      'validation',
      [{ loc: ['body'], msg: 'text values must not contain the NUL character (\\u0000)', type: 'value_error.str.nul' }],
      { cause: error },
    );
  }
  return null;
}
