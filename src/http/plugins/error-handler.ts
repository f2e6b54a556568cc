import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { AppError, ERROR_CATALOG, wireCode, type ErrorCode, type ValidationIssue } from '../../domain/errors.ts';
import { notServedFamily } from '../not-served.ts';

/** Fastify's name for the part of the request that failed validation → the Svix/FastAPI `loc` head. */
const LOC_HEAD: Readonly<Record<string, string>> = { body: 'body', querystring: 'query', params: 'path', headers: 'header' };

/** Fastify's own request errors → catalog codes. */
const FASTIFY_CODES: Readonly<Record<string, ErrorCode>> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 'payload_too_large',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'unsupported_media_type',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'bad_request',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'bad_request',
  FST_ERR_CTP_INVALID_TYPE: 'unsupported_media_type',
};

/** Network error codes of a connection to the database that cannot be made or was lost. */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);
/** Messages of the pg driver and pool when the connection is gone or none can be had in time. */
const CONNECTION_MESSAGES = /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Connection refused/i;

/**
 * True when `error` (or one of its causes) says the database cannot be reached: SQLSTATE class 08
 * (connection exception), 57P01–57P03 (shutdown / cannot connect now), or a network error. Such a request
 * changed nothing, so it is answered 503 `service_unavailable` and may be retried.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e !== null && typeof e === 'object' && depth < 8; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && (/^08[0-9A-Z]{3}$/.test(code) || /^57P0[1-3]$/.test(code) || NETWORK_CODES.has(code))) return true;
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
 * Fastify/zod validation issues → `[{loc, msg, type}]` (numeric path segments become numbers). A field
 * outside the model is one issue per field, at its own loc (`extra fields not permitted`, as Svix says).
 */
function validationIssues(error: FastifyError): ValidationIssue[] {
  const head = LOC_HEAD[error.validationContext ?? 'body'] ?? 'body';
  return (error.validation ?? []).flatMap((v) => {
    const loc = [head, ...v.instancePath.split('/').filter((s) => s !== '').map((s) => (/^\d+$/.test(s) ? Number(s) : s))];
    const keys = (v.params as { keys?: unknown } | undefined)?.keys;
    if (v.keyword === 'unrecognized_keys' && Array.isArray(keys)) {
      return keys.map((key) => ({ loc: [...loc, String(key)], msg: 'extra fields not permitted', type: 'value_error.extra' }));
    }
    return [{ loc, msg: v.message ?? 'invalid', type: v.keyword }];
  });
}

/**
 * The body of an error answer: `{code, detail}`. Every 422 carries `detail` as a list of `{loc, msg, type}`
 * (the svix client's `HTTPValidationError`); a 422 whose cause has no field names the body as a whole.
 */
function send(reply: FastifyReply, code: ErrorCode, detail: string | readonly ValidationIssue[], headers: Readonly<Record<string, string>> = {}): FastifyReply {
  const status = ERROR_CATALOG[code].status;
  const shaped = status === 422 && typeof detail === 'string' ? [{ loc: ['body'], msg: detail, type: `value_error.${code}` }] : detail;
  return reply.code(status).headers(headers).type('application/json; charset=utf-8').send({ code: wireCode(code), detail: shaped });
}

/**
 * The error handler (docs/reference/errors.md): AppError → its status and `{code, detail}`; validation → 422 with
 * the failing fields (a NUL character the database cannot store included); body too large → 413; wrong
 * content type → 415; a body the client aborted → 400, logged as such (no stack); the database unreachable → 503;
 * anything else is a fault → opaque 500 naming the request id, logged as error. Unknown routes → 404
 * `not_found`; the Svix routes Tidings deliberately does not serve → 404 `not_served` with the reason.
 */
export function installErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    if (error instanceof AppError) return send(reply, error.code, error.detail, error.headers);
    if (hasZodFastifySchemaValidationErrors(error)) return send(reply, 'validation', validationIssues(error));
    const mapped = FASTIFY_CODES[error.code];
    if (mapped !== undefined) return send(reply, mapped, error.message);
    if (request.raw.readableAborted) {
      // The client closed the connection before its body arrived (its ECONNRESET is not the database's):
      // nothing was read, nothing was changed, and nobody is left to answer.
      request.log.info({ aborted: true }, 'client aborted the request before its body arrived');
      return send(reply, 'bad_request', 'The request body was not received completely');
    }
    if (isDatabaseUnavailable(error)) {
      request.log.warn({ err: error }, 'database unavailable');
      return send(reply, 'service_unavailable', 'The database cannot be reached; nothing was changed. Retry later.', { 'retry-after': '1' });
    }
    if (UNSTORABLE_TEXT_STATES.has(String((error as { code?: unknown }).code))) {
      return send(reply, 'validation', [{ loc: ['body'], msg: 'text values must not contain the NUL character (\\u0000)', type: 'value_error.str.nul' }]);
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
    if (family !== undefined) return send(reply, 'not_served', `Tidings does not serve ${family.name} (${request.method} ${path}): ${family.reason}`);
    return send(reply, 'not_found', `No route ${request.method} ${path}`);
  });
}
