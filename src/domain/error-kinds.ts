/**
 * The single list of attempt error kinds (docs/design.md#delivery-lifecycle). Every failed attempt stores exactly one.
 * docs/reference/error-kinds.md describes each; a test keeps the two in step.
 */
export const ErrorKind = Object.freeze({
  httpStatus: 'http_status',
  timeoutConnect: 'timeout_connect',
  timeoutHeaders: 'timeout_headers',
  timeoutBody: 'timeout_body',
  deadline: 'deadline',
  connectRefused: 'connect_refused',
  reset: 'reset',
  dns: 'dns',
  tls: 'tls',
  blockedAddress: 'blocked_address',
  tooLarge: 'too_large',
  redirect: 'redirect',
  protocol: 'protocol',
  receiverAuth: 'receiver_auth',
} as const);

/** One of the values of {@link ErrorKind}. */
export type ErrorKind = (typeof ErrorKind)[keyof typeof ErrorKind];

/** Every error kind, in catalog order. */
export const ERROR_KINDS: readonly ErrorKind[] = Object.freeze(Object.values(ErrorKind));
