import { maxHeaderSize, STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { TOKEN_PREFIX } from '../../app/credentials.ts';
import { AppError, ERROR_CATALOG, type ErrorCode } from '../../domain/errors.ts';
import type { LineSampler } from './line-sampler.ts';

/**
 * The HTTP edge cases that never reach a route, answered in the error contract (`{code, detail}` JSON,
 * docs/reference/errors.md) instead of Fastify's or Node's own bodies, and requests whose meaning would have
 * to be guessed, refused before authentication reads anything.
 */

/** Headers a request may carry at most once: a second one would be dropped or joined by Node, i.e. guessed. */
const SINGLE_HEADERS = ['authorization', 'idempotency-key', 'content-type', 'host'] as const;

/**
 * Query parameter names that carry a credential in other APIs (OAuth 2.0's `access_token`, RFC 6750 §2.3,
 * and the usual `token` / `api_key` spellings). A URL is logged, cached and kept in browser histories, so a
 * credential there leaks: such a request is refused (RFC 6750 §5.3 advises against query credentials).
 */
const CREDENTIAL_PARAMS = new Set([
  'access_token',
  'token',
  'api_key',
  'apikey',
  'api-key',
  'key',
  'auth',
  'authorization',
  'bearer',
  'secret',
  'password',
  'jwt',
]);

/**
 * A value shaped like a Tidings token: the prefix and at least 32 base64url characters (generated tokens have
 * 43). Shorter values with the prefix (an event type `tidings_signup`, say) are ordinary filters.
 */
const TOKEN_SHAPE = new RegExp(`^${TOKEN_PREFIX}[A-Za-z0-9_-]{32,}$`);

/** True when a query parameter `name=value` looks like a credential (by name, or a Tidings token as value). */
function isCredentialParam(name: string, value: string): boolean {
  return CREDENTIAL_PARAMS.has(name.toLowerCase()) || TOKEN_SHAPE.test(value);
}

/** What the query string of `url` holds that must be refused: a credential, bytes that do not decode, or nothing. */
function queryProblem(url: string): 'credential' | 'undecodable' | null {
  const q = url.indexOf('?');
  if (q < 0) return null;
  let undecodable = false;
  for (const part of url.slice(q + 1).split('&')) {
    const eq = part.indexOf('=');
    const rawName = eq < 0 ? part : part.slice(0, eq);
    const rawValue = eq < 0 ? '' : part.slice(eq + 1);
    try {
      if (
        isCredentialParam(
          decodeURIComponent(rawName.replaceAll('+', ' ')),
          decodeURIComponent(rawValue.replaceAll('+', ' ')),
        )
      )
        return 'credential';
    } catch {
      if (CREDENTIAL_PARAMS.has(rawName.toLowerCase())) return 'credential';
      undecodable = true;
    }
  }
  return undecodable ? 'undecodable' : null;
}

/**
 * `url` with the value of every credential-looking query parameter replaced by `[redacted]`, for log lines
 * (the request itself is refused with `credentials_in_query`). A URL without a query is returned as it is.
 */
export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  if (q < 0) return url;
  const parts = url
    .slice(q + 1)
    .split('&')
    .map((part) => {
      const eq = part.indexOf('=');
      const rawName = eq < 0 ? part : part.slice(0, eq);
      const rawValue = eq < 0 ? '' : part.slice(eq + 1);
      let name = rawName;
      let value = rawValue;
      try {
        name = decodeURIComponent(rawName.replaceAll('+', ' '));
        value = decodeURIComponent(rawValue.replaceAll('+', ' '));
      } catch {
        return `${rawName}=[redacted]`; // not decodable: nothing of it is worth logging
      }
      return isCredentialParam(name, value) ? `${rawName}=[redacted]` : part;
    });
  return `${url.slice(0, q)}?${parts.join('&')}`;
}

/** True when a request announces a body: any Transfer-Encoding, or a Content-Length other than 0. */
function announcesBody(headers: FastifyRequest['headers']): boolean {
  const length = headers['content-length'];
  return headers['transfer-encoding'] !== undefined || (length !== undefined && length.trim() !== '0');
}

function count(rawHeaders: readonly string[], name: string): number {
  let n = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) if (rawHeaders[i]?.toLowerCase() === name) n++;
  return n;
}

/**
 * The checks run first on every request (an `onRequest` hook installed before authentication):
 * - HTTP/1.1 without `Host` → 400 `bad_request` (RFC 9112 §3.2: "A server MUST respond with a 400 … to any
 *   HTTP/1.1 request message that lacks a Host header field");
 * - two `Authorization`, `Idempotency-Key`, `Content-Type` or `Host` headers → 400 `ambiguous_request`
 *   (Node keeps the first Authorization and joins two Idempotency-Keys with ", ": either is a guess);
 * - a `Content-Encoding` other than `identity` → 415 `unsupported_content_encoding` with
 *   `Accept-Encoding: identity` (RFC 9110 §15.5.16 and §12.5.3: 415 is the status for an unsupported content
 *   coding; the body is never decompressed, so its size limit holds);
 * - a `Transfer-Encoding` other than `chunked` alone (`gzip, chunked`, two headers, …) → 501
 *   `unsupported_transfer_encoding` (RFC 9112 §6.1: a server that does not understand a transfer coding
 *   SHOULD answer 501; Node would de-chunk and pass the compressed bytes on as the body);
 * - a credential in the query string (by parameter name, or a value shaped like a Tidings token) → 400
 *   `credentials_in_query` (see {@link redactUrl} for the log); a query that does not percent-decode → 400
 *   `bad_request`.
 * @throws AppError as listed
 */
export function checkRequestShape(request: FastifyRequest): void {
  const raw = request.raw;
  if (raw.httpVersionMajor === 1 && raw.httpVersionMinor >= 1 && count(raw.rawHeaders, 'host') === 0) {
    throw new AppError('bad_request', 'An HTTP/1.1 request needs a Host header (RFC 9112 §3.2)', {
      headers: { connection: 'close' },
    });
  }
  for (const name of SINGLE_HEADERS) {
    if (count(raw.rawHeaders, name) > 1)
      throw new AppError('ambiguous_request', `The ${name} header appears more than once; send it once`, {
        headers: { connection: 'close' },
      });
  }
  const encoding = request.headers['content-encoding'];
  if (encoding !== undefined && encoding.trim().toLowerCase() !== 'identity') {
    throw new AppError('unsupported_content_encoding', 'Content-Encoding is not accepted; send the body uncompressed', {
      headers: { 'accept-encoding': 'identity', connection: 'close' },
    });
  }
  const transfer = request.headers['transfer-encoding'];
  if (transfer !== undefined && transfer.trim().toLowerCase() !== 'chunked') {
    throw new AppError(
      'unsupported_transfer_encoding',
      'Only "Transfer-Encoding: chunked" is accepted (no other transfer coding, alone or with chunked); send ' +
        'Content-Length, or chunked alone',
      { headers: { connection: 'close' } },
    );
  }
  const problem = queryProblem(request.url);
  if (problem === 'undecodable')
    throw new AppError('bad_request', 'The query string is not valid percent-encoding (RFC 3986 §2.1)');
  if (problem === 'credential') {
    throw new AppError(
      'credentials_in_query',
      'A credential was sent in the query string; send it as "Authorization: Bearer <token>" and treat this ' +
        'one as leaked',
      { headers: { connection: 'close' } },
    );
  }
}

/**
 * Refuses a body sent to a route that takes none (a route without a body schema: `POST /auth/logout`,
 * resend, pause, every GET and DELETE) with 400 `body_not_allowed` naming the route, before any of it is
 * read, and closes the connection: a slow body there would only hold a connection. Such a route accepts a request
 * without a body whatever its Content-Type. An `onRequest` hook
 * installed after authentication, so a caller without a credential still gets its 401 (or 403) first.
 * @throws AppError `body_not_allowed`
 */
export function installBodyNotAllowed(app: FastifyInstance): void {
  app.addHook('onRequest', async (request) => {
    if (request.is404 || request.routeOptions.schema?.body !== undefined) return;
    if (!announcesBody(request.headers)) {
      // No body: its Content-Type (a client that sets one on every request) describes nothing. Fastify would still
      // run the JSON parser on the empty body, which refuses it; the header goes before the body is parsed.
      delete request.headers['content-type'];
      return;
    }
    const route = `${request.method} ${request.routeOptions.url ?? ''}`;
    throw new AppError(
      'body_not_allowed',
      `${route} takes no request body; send none (no Content-Length, or Content-Length: 0)`,
      { headers: { connection: 'close' } },
    );
  });
}

/** Fastify's framework errors (a bad percent-encoding, a path segment over the router's limit) → the contract. */
function frameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const maxParamLength = (
    request.server.initialConfig as { readonly routerOptions?: { readonly maxParamLength?: number } }
  ).routerOptions?.maxParamLength;
  const [code, detail]: [ErrorCode, string] =
    error.code === 'FST_ERR_BAD_URL'
      ? ['bad_request', 'The request target is not a valid URL (a malformed percent-encoding)']
      : error.code === 'FST_ERR_MAX_PARAM_LENGTH'
        ? [
            'uri_too_long',
            `A path segment of the request target is longer than the router accepts (${maxParamLength ?? '?'} ` +
              'characters)',
          ]
        : ['bad_request', 'The request could not be routed'];
  // The request target is not echoed: it may hold anything, a credential included.
  void reply.code(ERROR_CATALOG[code].status).type('application/json; charset=utf-8').send({ code, detail });
}

/** Node's parser errors → status, code and detail (llhttp error codes; ERR_HTTP_REQUEST_TIMEOUT from the server). */
function clientErrorAnswer(err: NodeJS.ErrnoException): [ErrorCode, string] {
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT')
    return [
      'request_timeout',
      'The request did not arrive in time (TIDINGS_API_HEADERS_TIMEOUT, TIDINGS_API_REQUEST_TIMEOUT)',
    ];
  if (err.code === 'HPE_HEADER_OVERFLOW')
    return [
      'headers_too_large',
      `The request line and headers are larger than the server accepts (${maxHeaderSize} bytes, Node's ` +
        '--max-http-header-size)',
    ];
  if (err.code === 'HPE_URI_TOO_LONG') return ['uri_too_long', 'The request target is too long'];
  return ['bad_request', `The request is not valid HTTP/1.1 (${err.code ?? 'parse error'})`];
}

/**
 * Installs the framework-error answers and the shape checks. Node's own client errors are answered by
 * {@link clientErrorHandler}, passed to Fastify at construction.
 */
export function installEdgeErrors(app: FastifyInstance): void {
  app.addHook('onRequest', async (request) => checkRequestShape(request));
  app.addHook('onSend', async (request, reply, payload) => {
    if (request.raw.complete || !announcesBody(request.headers)) return payload;
    // Answered before the body arrived (a 403, a 4xx before the body): the rest is never read, so the
    // connection is closed instead of kept for a caller that may trickle it until the request timeout.
    reply.header('connection', 'close');
    answeredEarly.add(request.raw.socket);
    return payload;
  });
}

/** Sockets whose request was answered before its body arrived: a later timeout on them writes nothing. */
const answeredEarly = new WeakSet<object>();

/** The `frameworkErrors` option of Fastify (set at construction). */
export const frameworkErrors = frameworkError;

/**
 * Makes Fastify's `clientErrorHandler`: a request Node could not parse, or that timed out, is answered with
 * `{code, detail}` JSON and the connection closed (nothing of the request is echoed). A reset or already
 * closed socket gets nothing, nor one whose request was answered already (never a second answer). Lines are written
 * through `sampler` (at most TIDINGS_REFUSAL_LOG_RATE a second).
 */
export function clientErrorHandler(
  sampler: LineSampler,
  log: (obj: object, msg: string) => void,
): (err: NodeJS.ErrnoException, socket: Duplex) => void {
  return (err, socket) => {
    if (err.code === 'ECONNRESET' || socket.destroyed) return;
    if (answeredEarly.has(socket)) {
      socket.destroy(); // the request was answered already: never a second answer on the same connection
      return;
    }
    const [code, detail] = clientErrorAnswer(err);
    const status = ERROR_CATALOG[code].status;
    if (sampler.take()) log({ clientError: err.code, status }, 'client error');
    if (!socket.writable) {
      socket.destroy();
      return;
    }
    const body = JSON.stringify({ code, detail });
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\nContent-Type: application/json; ` +
        `charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  };
}
