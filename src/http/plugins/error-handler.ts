import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { AppError, ERROR_CATALOG, wireCode, type ErrorCode, type ValidationIssue } from '../../domain/errors.ts';
import { boundedIssues, boundedText } from '../../domain/error-bounds.ts';
import { notServedFamily } from '../not-served.ts';
import type { LineSampler } from './line-sampler.ts';

/** Fastify's name for the part of the request that failed validation → the Svix/FastAPI `loc` head. */
const LOC_HEAD: Readonly<Record<string, string>> = {
  body: 'body',
  querystring: 'query',
  params: 'path',
  headers: 'header',
};

/** Fastify's own request errors → catalog codes. */
const FASTIFY_CODES: Readonly<Record<string, ErrorCode>> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 'payload_too_large',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'unsupported_media_type',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'bad_request',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'bad_request',
  FST_ERR_CTP_INVALID_TYPE: 'unsupported_media_type',
};

/**
 * Fastify/zod validation issues → `[{loc, msg, type}]` (numeric path segments become numbers). A field
 * outside the model is one issue per field, at its own loc (`extra fields not permitted`, as Svix says).
 */
function validationIssues(error: FastifyError): ValidationIssue[] {
  const head = LOC_HEAD[error.validationContext ?? 'body'] ?? 'body';
  return (error.validation ?? []).flatMap((v) => {
    const loc = [
      head,
      ...v.instancePath
        .split('/')
        .filter((s) => s !== '')
        .map((s) => (/^\d+$/.test(s) ? Number(s) : s)),
    ];
    const keys = (v.params as { keys?: unknown } | undefined)?.keys;
    if (v.keyword === 'unrecognized_keys' && Array.isArray(keys)) {
      return keys.map((key) => ({
        loc: [...loc, String(key)],
        msg: 'extra fields not permitted',
        type: 'value_error.extra',
      }));
    }
    return [{ loc, msg: v.message ?? 'invalid', type: v.keyword }];
  });
}

/**
 * The body of an error answer: `{code, detail}`. Every 422 carries `detail` as a list of `{loc, msg, type}`
 * (the svix client's `HTTPValidationError`); a 422 whose cause has no field names the body as a whole. At
 * most ERROR_BOUNDS.issuesMax issues are listed and every text is bounded (docs/reference/errors.md).
 */
function send(
  reply: FastifyReply,
  code: ErrorCode,
  detail: string | readonly ValidationIssue[],
  headers: Readonly<Record<string, string>> = {},
): FastifyReply {
  const status = ERROR_CATALOG[code].status;
  // Bounded (domain/error-bounds.ts): a refusal may quote the request and list any number of fields.
  const shaped =
    typeof detail !== 'string'
      ? boundedIssues(detail)
      : status === 422
        ? boundedIssues([{ loc: ['body'], msg: detail, type: `value_error.${code}` }])
        : boundedText(detail);
  return reply
    .code(status)
    .headers(headers)
    .type('application/json; charset=utf-8')
    .send({ code: wireCode(code), detail: shaped });
}

/**
 * Fastify's `schemaErrorFormatter`: the message of a request that failed its schema, bounded — it is what the
 * request's trace span and log line carry, and a body with thousands of unknown keys has thousands of issues.
 * The answer is built from the error's `validation` list (the error handler), not from this message.
 */
export function schemaErrorMessage(
  errors: readonly { readonly instancePath?: string; readonly message?: string }[],
  dataVar: string,
): Error {
  const first = errors
    .slice(0, 3)
    .map((e) => `${dataVar}${e.instancePath ?? ''} ${e.message ?? 'invalid'}`)
    .join('; ');
  const fields = `${errors.length} failing field${errors.length === 1 ? '' : 's'}`;
  return new Error(boundedText(`${fields}: ${first}${errors.length > 3 ? '; …' : ''}`));
}

/** Where a NUL character the database refused came from, when a path or query parameter holds one; else null. */
function nulParameter(request: FastifyRequest): string[] | null {
  for (const [head, values] of [
    ['path', request.params],
    ['query', request.query],
  ] as const) {
    if (values === null || typeof values !== 'object') continue;
    for (const [name, value] of Object.entries(values)) {
      if (typeof value === 'string' && value.includes('\0')) return [head, name];
    }
  }
  return null;
}

/**
 * The error handler (docs/reference/errors.md): AppError → its status and `{code, detail}`; validation → 422 with
 * the failing fields (a NUL character the database cannot store included); body too large → 413; wrong
 * content type → 415; a body the client aborted → 400, logged as such (no stack; sampled by `aborts`); a database
 * failure as `databaseError` (the database adapter's mapping to the error catalogue) names it, the unreachable one
 * logged; anything else is a fault → opaque 500 naming the request id, logged as error. Unknown routes → 404
 * `not_found`; the Svix routes Tidings deliberately does not serve → 404 `not_served` with the reason.
 */
export function installErrorHandler(
  app: FastifyInstance,
  databaseError: (error: unknown) => AppError | null,
  aborts?: LineSampler,
): void {
  app.setErrorHandler((error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    if (error instanceof AppError) return send(reply, error.code, error.detail, error.headers);
    if (hasZodFastifySchemaValidationErrors(error)) return send(reply, 'validation', validationIssues(error));
    const mapped = FASTIFY_CODES[error.code];
    // A refusal by a limit names its setting and value.
    if (mapped === 'payload_too_large')
      return send(
        reply,
        mapped,
        `The request body is larger than TIDINGS_MAX_BODY_BYTES (${request.routeOptions.bodyLimit} bytes)`,
        { connection: 'close' },
      );
    if (mapped !== undefined) return send(reply, mapped, error.message);
    if (request.raw.readableAborted) {
      // The client closed the connection before its body arrived (its ECONNRESET is not the database's):
      // nothing was read, nothing was changed, and nobody is left to answer.
      // Sampled (TIDINGS_REFUSAL_LOG_RATE): a client may abort as often as it connects.
      if (aborts?.take() ?? true) {
        request.log.info({ aborted: true }, 'client aborted the request before its body arrived');
      }
      return send(reply, 'bad_request', 'The request body was not received completely');
    }
    // A database failure the adapter names (unreachable → 503, text it cannot store → 422).
    const fromDatabase = databaseError(error);
    const nulAt = fromDatabase?.code === 'validation' ? nulParameter(request) : null;
    if (nulAt !== null) {
      const msg = 'must not contain the NUL character (\\u0000)';
      return send(reply, 'validation', [{ loc: nulAt, msg, type: 'value_error.str.nul' }]);
    }
    if (fromDatabase !== null) {
      if (fromDatabase.code === 'service_unavailable') request.log.warn({ err: error }, 'database unavailable');
      return send(reply, fromDatabase.code, fromDatabase.detail, fromDatabase.headers);
    }
    if (typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 500) {
      return send(reply, 'bad_request', error.message);
    }
    request.log.error({ err: error }, 'unexpected fault');
    return send(reply, 'internal_error', `Internal error (request id ${request.id})`);
  });
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? '';
    const family = notServedFamily(path);
    if (family !== undefined)
      return send(
        reply,
        'not_served',
        `Tidings does not serve ${family.name} (${request.method} ${path}): ${family.reason}`,
      );
    return send(reply, 'not_found', `No route ${request.method} ${path}`);
  });
}
