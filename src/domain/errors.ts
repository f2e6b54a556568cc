import { errorSummary } from './error-bounds.ts';
import type { ValidationIssue } from './validation-issue.ts';

export type { ValidationIssue } from './validation-issue.ts';

/**
 * The application error catalog (docs/reference/errors.md; src/domain/errors.test.ts keeps the two in step). Every
 * error the API answers carries one of these stable snake_case codes; docs/reference/errors.md lists them and a test
 * keeps the two in step. Attempt outcomes are not errors (see attempt-outcome.ts); faults are anything else.
 */
export const ERROR_CATALOG = Object.freeze({
  validation: {
    status: 422,
    description: 'The request body, query or path failed validation; detail lists the fields.',
  },
  bad_request: { status: 400, description: 'The request could not be read (malformed JSON, wrong content type).' },
  authentication_failed: { status: 401, description: 'No Bearer token, or one that is unknown or revoked.' },
  forbidden: { status: 403, description: 'The credential may not use this route.' },
  field_forbidden: {
    status: 403,
    description: 'The credential may not change the field that detail names (the operator can).',
  },
  not_found: { status: 404, description: 'No such object, or not visible to this credential.' },
  not_served: {
    status: 404,
    description:
      'A Svix route Tidings deliberately does not serve; detail gives the reason (README "Coming from Svix").',
  },
  conflict: { status: 409, description: 'A unique field (uid, eventId, name) is already taken.' },
  idempotency_key_in_flight: {
    status: 409,
    description: 'A request with this Idempotency-Key is still being processed; retry shortly.',
  },
  idempotency_key_mismatch: { status: 422, description: 'This Idempotency-Key was used with a different request.' },
  url_not_allowed: { status: 422, description: 'The endpoint URL is not http(s) or points at a refused address.' },
  search_unbounded: {
    status: 422,
    description:
      'A search of the delivery log that no index bounds: no window (after), a window wider than ' +
      'TIDINGS_SEARCH_MAX_WINDOW, or an attempt search without endpoint_id; detail names the field to add or ' +
      'narrow.',
  },
  payload_too_large: { status: 413, description: 'The request body exceeds TIDINGS_MAX_BODY_BYTES.' },
  unsupported_media_type: { status: 415, description: 'Only application/json bodies are accepted.' },
  ambiguous_request: {
    status: 400,
    description:
      'A header that must appear once (Authorization, Idempotency-Key, Content-Type, Host) appears more than once.',
  },
  credentials_in_query: {
    status: 400,
    description: 'A credential was sent in the query string; send it in the Authorization header.',
  },
  request_timeout: {
    status: 408,
    description:
      'The request did not arrive within TIDINGS_API_HEADERS_TIMEOUT / TIDINGS_API_REQUEST_TIMEOUT, or its ' +
      'body arrived slower than TIDINGS_API_MIN_BODY_RATE.',
  },
  uri_too_long: { status: 414, description: 'The request target or one of its path segments is too long.' },
  headers_too_large: { status: 431, description: "The request headers exceed the server's header size limit." },
  unsupported_content_encoding: {
    status: 415,
    description: 'The body has a Content-Encoding; only identity (uncompressed) bodies are accepted.',
  },
  unsupported_transfer_encoding: {
    status: 501,
    description: 'The request has a Transfer-Encoding other than chunked alone; send Content-Length or chunked.',
  },
  body_not_allowed: {
    status: 400,
    description: 'The route takes no request body and one was sent; detail names the route.',
  },
  endpoint_limit_reached: {
    status: 409,
    description: 'The application already has TIDINGS_MAX_ENDPOINTS_PER_APP endpoints.',
  },
  rate_limited: {
    status: 429,
    description:
      'Too many requests for this credential, or from this client address; detail names the limit, see Retry-After.',
  },
  concurrency_limited: {
    status: 429,
    description:
      'Too many requests of this credential, or from this client address, in progress at once; detail names ' +
      'the limit, see Retry-After.',
  },
  service_unavailable: { status: 503, description: 'The database cannot be reached; nothing was accepted.' },
  lookups_changing: {
    status: 503,
    description:
      "The application, its event type or its endpoints' payload filters changed each time the message was about " +
      'to be stored; nothing was accepted: send it again (see Retry-After).',
  },
  internal_error: {
    status: 500,
    description: 'An unexpected fault; the body carries a request id to find it in the logs.',
  },
} as const);

/** A stable error code from {@link ERROR_CATALOG}. */
export type ErrorCode = keyof typeof ERROR_CATALOG;

/**
 * Codes sent on the wire under another name, where the svix client models Svix's own: a 403 carries
 * `"insufficient access"`, the code self-hosted Svix answers (svix-server `HttpError::permission_denied`).
 * Every other code is sent as it is named in {@link ERROR_CATALOG}.
 */
export const WIRE_CODES: Readonly<Partial<Record<ErrorCode, string>>> = Object.freeze({
  forbidden: 'insufficient access',
});

/** The `code` an error is answered with: {@link WIRE_CODES} or the catalog name. */
export function wireCode(code: ErrorCode): string {
  return WIRE_CODES[code] ?? code;
}

/**
 * An application error: expected, typed, answered to the caller with its HTTP status and `{code, detail}`.
 * `detail` is a sentence, or for `validation` the list of failing fields.
 */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly detail: string | readonly ValidationIssue[];
  readonly headers: Readonly<Record<string, string>>;

  constructor(
    code: ErrorCode,
    detail: string | readonly ValidationIssue[],
    options?: { cause?: unknown; headers?: Record<string, string> },
  ) {
    // Bounded (error-bounds.ts): the message is what a log line and a trace span's status carry.
    super(errorSummary(code, detail), options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AppError';
    this.code = code;
    this.status = ERROR_CATALOG[code].status;
    this.detail = detail;
    this.headers = options?.headers ?? {};
  }
}

/** Shorthand for a 404 that reveals nothing about whether the object exists elsewhere. */
export function notFound(what = 'Entity'): AppError {
  return new AppError('not_found', `${what} not found`);
}
