import type { SendResult } from '../../domain/attempt-outcome.ts';
import { ErrorKind } from '../../domain/error-kinds.ts';
import type { OutboundRequest, Sender } from '../../ports/sender.ts';
import { AttemptHandler } from './attempt-handler.ts';
import { AttemptStoppedError } from './classify-error.ts';
import type { LookupFunction } from './guarded-connect.ts';
import { createTokenCache } from './oauth2-tokens.ts';
import {
  sendWithReceiverAuth,
  type PlainExtra,
  type PlainSend,
  type ReceiverAuthSettings,
} from './receiver-auth-send.ts';
import { createSenderPools, type Pool, type Seen, type SenderPools } from './sender-pools.ts';

/**
 * Options of {@link createHttpSender}. Durations are in milliseconds, sizes in bytes. The configuration
 * (src/config/config.ts) supplies each one; the names match its settings.
 */
export interface HttpSenderOptions {
  /** DNS lookup + TCP connect + TLS handshake of a new connection, in ms (TIDINGS_CONNECT_TIMEOUT). */
  readonly connectTimeoutMs: number;
  /**
   * From the request written to the final response headers, in ms (TIDINGS_HEADERS_TIMEOUT). Bytes of a
   * slowly dripped header block do not reset it; a complete 1xx response does (undici), which is why the
   * deadline exists.
   */
  readonly headersTimeoutMs: number;
  /** Longest gap between two response body chunks, in ms (TIDINGS_BODY_TIMEOUT). */
  readonly bodyTimeoutMs: number;
  /**
   * Overall deadline of one attempt, in ms, from the call of `send` (waiting for a free socket included)
   * to the last body byte (TIDINGS_ATTEMPT_DEADLINE). Nothing resets it: not 1xx responses, not slowly
   * dripped headers or body. A request's own {@link OutboundRequest.deadlineMs} (a retry policy's attemptTimeout)
   * replaces it for that request; when it is longer than the headers or body timeout, those are raised to it for that
   * request, so that the policy's timeout is the one that cuts a slow receiver.
   */
  readonly deadlineMs: number;
  /** Response body bytes read at most; the rest is discarded and the socket closed (TIDINGS_MAX_RESPONSE_BYTES). */
  readonly maxResponseBytes: number;
  /** Body bytes kept as the attempt's `bodyPrefix`, at most maxResponseBytes (TIDINGS_RESPONSE_PREFIX_BYTES). */
  readonly responsePrefixBytes: number;
  /**
   * Connections per pool and origin (scheme, host, port); further attempts of that pool queue
   * (TIDINGS_MAX_SOCKETS_PER_ORIGIN). Each {@link OutboundRequest.poolKey} (an endpoint) has its own pool.
   */
  readonly maxSocketsPerOrigin: number;
  /** CIDR ranges that open otherwise refused addresses (TIDINGS_EGRESS_ALLOWLIST, docs/design.md#security). */
  readonly egressAllowlist: readonly string[];
  /** The `user-agent` header of every request, e.g. `Tidings/0.1.0`. */
  readonly userAgent: string;
  /** Response header block size cap in bytes; larger → `too_large`. Default 16 KiB (Node's default). */
  readonly maxHeaderBytes?: number;
  /**
   * Resolver with the shape of `dns.lookup(name, { all: true }, cb)`; default the system resolver. Tests inject one.
   */
  readonly lookup?: LookupFunction;
  /** Receiver authentication's caches (docs/adr/0028-receiver-authentication.md); default RECEIVER_AUTH_DEFAULTS. */
  readonly receiverAuth?: ReceiverAuthSettings;
  /** The clock of OAuth2 token expiry, Unix ms; default `Date.now`. Tests pass a manual clock's. */
  readonly nowMs?: () => number;
}

/** The defaults of {@link HttpSenderOptions.receiverAuth}: the settings' defaults (src/config/config.ts). */
export const RECEIVER_AUTH_DEFAULTS: ReceiverAuthSettings = Object.freeze({
  cacheMax: 1000,
  tokenEarlyRefreshMs: 30_000,
  tokenDefaultLifetimeMs: 300_000,
});

/**
 * Request headers the sender owns: framing and connection management are undici's, `host` comes from the
 * URL, and `user-agent` is always Tidings' own. A caller's value for any of them is dropped.
 */
const SENDER_OWNED_HEADERS = new Set([
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'expect',
  'te',
  'trailer',
  'proxy-connection',
  'proxy-authorization',
  'user-agent',
]);

const DEFAULT_MAX_HEADER_BYTES = 16 * 1024;

function requirePositive(name: string, value: number, min = 1): void {
  if (!Number.isInteger(value) || value < min)
    throw new RangeError(`${name} must be an integer ≥ ${min}, got ${value}`);
}

function validate(options: HttpSenderOptions): void {
  requirePositive('connectTimeoutMs', options.connectTimeoutMs);
  requirePositive('headersTimeoutMs', options.headersTimeoutMs);
  requirePositive('bodyTimeoutMs', options.bodyTimeoutMs);
  requirePositive('deadlineMs', options.deadlineMs);
  requirePositive('maxResponseBytes', options.maxResponseBytes, 0);
  requirePositive('responsePrefixBytes', options.responsePrefixBytes, 0);
  requirePositive('maxSocketsPerOrigin', options.maxSocketsPerOrigin);
  requirePositive('maxHeaderBytes', options.maxHeaderBytes ?? DEFAULT_MAX_HEADER_BYTES);
  if (options.responsePrefixBytes > options.maxResponseBytes)
    throw new RangeError('responsePrefixBytes must not exceed maxResponseBytes');
  if (options.userAgent.trim() === '') throw new RangeError('userAgent must not be empty');
}

function outboundHeaders(request: OutboundRequest, userAgent: string): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    const lower = name.toLowerCase();
    if (!SENDER_OWNED_HEADERS.has(lower)) headers[lower] = value;
  }
  headers['user-agent'] = userAgent;
  return headers;
}

/** The egress-policy refusal as a tenant reads it: no internal name or address (docs/reference/error-kinds.md). */
export const REFUSED_ADDRESS_DETAIL = 'refused address';

/**
 * A host name that did not lead to an address Tidings may contact, as a tenant reads it: the same words whether
 * the lookup failed or found only refused addresses, so a tenant cannot probe which internal names exist
 * (docs/reference/error-kinds.md, `dns`).
 */
export const UNRESOLVED_NAME_DETAIL = 'host name not resolved to an address that may be contacted';

type Network = {
  resolvedAddresses?: readonly string[];
  connectedAddress: string | null;
  reason?: string;
  decidedBy?: string;
};

/**
 * Adds the operator's {@link NetworkDetail} to a result, and keeps the tenant's detail free of what names
 * resolve to: a `blocked_address` refusal reads "refused address"; a `dns` failure, whether the lookup failed or
 * the name resolved to a refused address, reads {@link UNRESOLVED_NAME_DETAIL} with a duration of 0 (the
 * lookup's time would tell the two apart); the full reason, with the time taken, is `network.reason`, and a
 * refusal names the setting or limit that decided it.
 */
function withNetwork(result: SendResult, seen: Seen, maxHeaderBytes: number): SendResult {
  const network: Network = { connectedAddress: seen.connected };
  if (seen.resolved !== null) network.resolvedAddresses = seen.resolved;
  if (result.type === 'error' && result.errorKind === ErrorKind.dns) {
    const refusedName = result.detail.startsWith('TIDINGS_REFUSED_NAME');
    // A failed lookup resolved nothing: the addresses seen are an earlier connection's.
    const dns: Network = {
      ...(refusedName && seen.resolved !== null ? { resolvedAddresses: seen.resolved } : {}),
      connectedAddress: null,
      reason: `${result.detail} (after ${Math.round(result.durationMs)} ms)`,
      decidedBy: refusedName ? 'TIDINGS_EGRESS_ALLOWLIST' : 'the host name resolver',
    };
    return { ...result, detail: UNRESOLVED_NAME_DETAIL, durationMs: 0, network: dns };
  }
  if (result.type === 'error' && result.errorKind === ErrorKind.blockedAddress) {
    return {
      ...result,
      detail: REFUSED_ADDRESS_DETAIL,
      network: { ...network, connectedAddress: null, reason: result.detail, decidedBy: 'TIDINGS_EGRESS_ALLOWLIST' },
    };
  }
  if (result.type === 'error' && result.errorKind === ErrorKind.tooLarge) {
    return {
      ...result,
      network: { ...network, reason: result.detail, decidedBy: `response header limit of ${maxHeaderBytes} bytes` },
    };
  }
  if (result.type === 'response' && result.bodyError === ErrorKind.tooLarge) {
    return { ...result, network: { ...network, decidedBy: 'TIDINGS_MAX_RESPONSE_BYTES' } };
  }
  return { ...result, network };
}

function refused(errorKind: ErrorKind, detail: string): SendResult {
  return { type: 'error', errorKind, detail, durationMs: 0 };
}

/**
 * Creates the outbound Sender on undici (docs/design.md#the-protocol, step 2; docs/design.md#security).
 *
 * Each `send` makes one POST with the caller's headers plus `user-agent`, through a private undici
 * `Agent` (never the global dispatcher, so HTTP_PROXY / HTTPS_PROXY / NO_PROXY are ignored) whose every
 * new connection passes the SSRF guard of guarded-connect.ts. Redirects are never followed (a 3xx is a
 * response with its `location`); responses are never decompressed; at most `maxResponseBytes` body bytes
 * are read. `send` never throws: every failure is a {@link SendResult} of type `error` with a kind from
 * src/domain/error-kinds.ts, or a `response` with `bodyError` when the status line had already arrived
 * (a 2xx whose body is then cut still counts as delivered, docs/design.md#retries-and-endpoint-health).
 *
 * When `signal` is already aborted, or aborts before the request was written, the result is an error of
 * kind `deadline` with detail `aborted` and nothing is written to the receiver; an abort after the request
 * was written closes the connection and says so in the detail.
 *
 * @throws RangeError at creation for an invalid option or allow-list entry (never from `send`).
 */
export function createHttpSender(options: HttpSenderOptions): Sender {
  validate(options);
  const maxHeaderBytes = options.maxHeaderBytes ?? DEFAULT_MAX_HEADER_BYTES;
  const auth = options.receiverAuth ?? RECEIVER_AUTH_DEFAULTS;
  const pools = createSenderPools({ ...options, maxHeaderBytes }, auth.cacheMax);
  const plainContext: PlainContext = {
    options,
    pools,
    maxHeaderBytes,
    limits: { maxResponseBytes: options.maxResponseBytes, responsePrefixBytes: options.responsePrefixBytes },
  };
  const plain: PlainSend = (request, signal, extra) => sendPlain(plainContext, request, signal, extra);
  const tokenAgent = pools.agent({ resolved: null, connected: null });
  const tokens = createTokenCache({
    agent: tokenAgent,
    deadlineMs: options.deadlineMs,
    maxResponseBytes: options.maxResponseBytes,
    earlyRefreshMs: auth.tokenEarlyRefreshMs,
    defaultLifetimeMs: auth.tokenDefaultLifetimeMs,
    max: auth.cacheMax,
    userAgent: options.userAgent,
    nowMs: options.nowMs ?? Date.now,
  });
  const send = (request: OutboundRequest, signal?: AbortSignal): Promise<SendResult> =>
    request.receiverAuth == null
      ? plain(request, signal)
      : sendWithReceiverAuth(request, request.receiverAuth, signal, {
          plain,
          tokens,
          deadlineMs: options.deadlineMs,
        });

  return {
    send,
    async close(): Promise<void> {
      await Promise.all([pools.close(), tokenAgent.close()]);
    },
  };
}

/** What {@link sendPlain} sends with: the sender's options and pools. */
interface PlainContext {
  readonly options: HttpSenderOptions;
  readonly pools: SenderPools;
  readonly maxHeaderBytes: number;
  readonly limits: { readonly maxResponseBytes: number; readonly responsePrefixBytes: number };
}

/** The request's URL, or the refusal of a request that is aborted, has a bad deadline or a URL that may not be sent. */
function checked(request: OutboundRequest, signal: AbortSignal | undefined): URL | SendResult {
  if (signal?.aborted === true) return refused(ErrorKind.deadline, 'aborted');
  if (request.deadlineMs !== undefined && !(Number.isInteger(request.deadlineMs) && request.deadlineMs >= 1)) {
    return refused(ErrorKind.deadline, `attempt deadline of ${request.deadlineMs} ms is not a whole number of ms ≥ 1`);
  }
  let url: URL;
  try {
    url = new URL(request.url);
  } catch {
    return refused(ErrorKind.blockedAddress, 'the endpoint URL cannot be parsed');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return refused(ErrorKind.blockedAddress, `scheme "${url.protocol}" is not allowed; only http and https`);
  }
  return url;
}

/** The pool of a request: its endpoint's, or with a TLS client certificate, its endpoint's for that version. */
function poolOf(pools: SenderPools, poolKey: string, tls: PlainExtra['tls']): Pool {
  return tls === undefined
    ? pools.acquire(poolKey)
    : pools.acquire(`${poolKey}\u0000${tls.version}`, {
        endpointKey: poolKey,
        options: {
          ...(tls.certificate === null || tls.key === null ? {} : { cert: tls.certificate, key: tls.key }),
          ...(tls.ca === null ? {} : { ca: tls.ca }),
        },
      });
}

/** One POST without receiver authentication (or with what `extra` carries of it): {@link PlainSend}. */
function sendPlain(
  s: PlainContext,
  request: OutboundRequest,
  signal: AbortSignal | undefined,
  extra?: PlainExtra,
): Promise<SendResult> {
  const { options } = s;
  const url = checked(request, signal);
  if (!(url instanceof URL)) return Promise.resolve(url);
  const startedAt = extra?.startedAt ?? performance.now();
  const headers = outboundHeaders(request, options.userAgent);
  if (extra?.authorization !== undefined) headers['authorization'] = extra.authorization;
  return new Promise<SendResult>((resolve) => {
    const onAbort = (): void => {
      handler.stop(
        new AttemptStoppedError('TIDINGS_ABORTED', 'aborted'),
        handler.requestSent ? 'aborted after the request was sent' : 'aborted',
      );
    };
    const pool = poolOf(s.pools, request.poolKey ?? '', extra?.tls);
    const handler = new AttemptHandler(s.limits, startedAt, (result) => {
      pool.active -= 1;
      clearTimeout(deadline);
      signal?.removeEventListener('abort', onAbort);
      resolve(withNetwork(result, pool.seen, s.maxHeaderBytes));
    });
    const deadlineMs = Math.max(1, Math.round((request.deadlineMs ?? options.deadlineMs) - (extra?.spentMs ?? 0)));
    const deadline = setTimeout(() => {
      const detail = `attempt deadline of ${request.deadlineMs ?? options.deadlineMs} ms passed`;
      handler.stop(new AttemptStoppedError('TIDINGS_DEADLINE', detail), detail);
    }, deadlineMs);
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      // Credentials in the URL and its fragment are never sent (endpoint creation refuses credentials).
      pool.agent.dispatch(
        {
          origin: url.origin,
          path: `${url.pathname}${url.search}`,
          method: 'POST',
          headers,
          body: request.body,
          // A request's own, longer deadline raises the headers and body timeouts for it (see deadlineMs).
          ...(request.deadlineMs === undefined
            ? {}
            : {
                headersTimeout: Math.max(options.headersTimeoutMs, request.deadlineMs),
                bodyTimeout: Math.max(options.bodyTimeoutMs, request.deadlineMs),
              }),
        },
        handler,
      );
    } catch (error) {
      handler.onError(error instanceof Error ? error : new Error(String(error)));
    }
  });
}
