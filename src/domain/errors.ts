/**
 * The application error catalog (STYLE.md "Errors"). Every error the API answers carries one of these
 * stable snake_case codes; docs/reference/errors.md lists them and a test keeps the two in step.
 * Attempt outcomes are not errors (see attempt-outcome.ts); faults are anything else.
 */
export const ERROR_CATALOG = Object.freeze({
  validation: { status: 422, description: 'The request body, query or path failed validation; detail lists the fields.' },
  bad_request: { status: 400, description: 'The request could not be read (malformed JSON, wrong content type).' },
  authentication_failed: { status: 401, description: 'No Bearer token, or one that is unknown or revoked.' },
  forbidden: { status: 403, description: 'The credential may not use this route.' },
  field_forbidden: { status: 403, description: 'The credential may not change the field that detail names (the operator can).' },
  not_found: { status: 404, description: 'No such object, or not visible to this credential.' },
  conflict: { status: 409, description: 'A unique field (uid, eventId, name) is already taken.' },
  idempotency_key_in_flight: { status: 409, description: 'A request with this Idempotency-Key is still being processed; retry shortly.' },
  idempotency_key_mismatch: { status: 422, description: 'This Idempotency-Key was used with a different request.' },
  url_not_allowed: { status: 422, description: 'The endpoint URL is not http(s) or points at a refused address.' },
  payload_too_large: { status: 413, description: 'The request body exceeds TIDINGS_MAX_BODY_BYTES.' },
  unsupported_media_type: { status: 415, description: 'Only application/json bodies are accepted.' },
  rate_limited: { status: 429, description: 'Too many requests for this credential; see Retry-After.' },
  service_unavailable: { status: 503, description: 'The database cannot be reached; nothing was accepted.' },
  internal_error: { status: 500, description: 'An unexpected fault; the body carries a request id to find it in the logs.' },
} as const);

/** A stable error code from {@link ERROR_CATALOG}. */
export type ErrorCode = keyof typeof ERROR_CATALOG;

/** One failing field of a 422 validation error, in the Svix/FastAPI shape. */
export interface ValidationIssue {
  readonly loc: readonly (string | number)[];
  readonly msg: string;
  readonly type: string;
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

  constructor(code: ErrorCode, detail: string | readonly ValidationIssue[], options?: { cause?: unknown; headers?: Record<string, string> }) {
    super(typeof detail === 'string' ? detail : `${code}: ${detail.map((d) => `${d.loc.join('.')}: ${d.msg}`).join('; ')}`, options?.cause === undefined ? undefined : { cause: options.cause });
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

/** Thrown by a fenced store write that matched zero rows: the lease was lost (DESIGN §2). */
export class LeaseLostError extends Error {
  constructor(message = 'lease lost: fencing token no longer matches', options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'LeaseLostError';
  }
}
