import { request, type Agent } from 'undici';
import type { OAuth2ClientCredentials } from '../../domain/receiver-auth.ts';
import { ErrorKind } from '../../domain/error-kinds.ts';
import { classifyError } from './classify-error.ts';

/**
 * OAuth2 client-credentials tokens of a sender (docs/adr/0028-receiver-authentication.md): one cache entry per
 * endpoint and receiver-auth version, fetched once however many attempts wait for it (single-flight), kept until
 * `earlyRefreshMs` before it expires (an `expires_in` of 0 or less: used once, not kept), dropped on a 401 from the
 * receiver. The token request goes through the same
 * guarded agent as deliveries (SSRF guard), within the attempt deadline, its body read up to the response cap.
 * Neither the token nor the client secret ever appears in an error detail.
 */

/** Settings of {@link createTokenCache}, from src/config/config.ts. */
export interface TokenCacheOptions {
  /** The guarded agent of token requests (SSRF guard, connect timeout). */
  readonly agent: Agent;
  /** Longest token request, ms (TIDINGS_ATTEMPT_DEADLINE). */
  readonly deadlineMs: number;
  /** Token response body bytes read at most (TIDINGS_MAX_RESPONSE_BYTES). */
  readonly maxResponseBytes: number;
  /** A token is fetched again this long before it expires, ms (TIDINGS_OAUTH2_TOKEN_EARLY_REFRESH). */
  readonly earlyRefreshMs: number;
  /** How long a token without a numeric `expires_in` is used, ms (TIDINGS_OAUTH2_TOKEN_DEFAULT_LIFETIME). */
  readonly defaultLifetimeMs: number;
  /** Most tokens kept; past it the least recently used goes (TIDINGS_RECEIVER_AUTH_CACHE_MAX). */
  readonly max: number;
  readonly userAgent: string;
  /** The clock of expiry (Unix ms); tests pass a manual clock's. */
  readonly nowMs: () => number;
}

/** A token endpoint that failed: the attempt's `receiver_auth` outcome. `detail` is safe to show the tenant. */
export class TokenError extends Error {
  readonly errorKind = ErrorKind.receiverAuth;
  readonly detail: string;
  constructor(detail: string) {
    super(detail);
    this.detail = detail;
    this.name = 'TokenError';
  }
}

/** A token held: its value (never logged) and the instant it is no longer used. */
export interface Token {
  readonly value: string;
  readonly renewAt: number;
}

interface Entry {
  token?: Token;
  pending?: Promise<Token>;
}

/** The token cache: `get` a token for a key (endpoint + version), `drop` one the receiver refused. */
export interface TokenCache {
  get(key: string, grant: OAuth2ClientCredentials): Promise<Token>;
  /** Drops `token` for `key` if it is still the one held (a newer one stays). */
  drop(key: string, token: Token): void;
}

/** `application/x-www-form-urlencoded` of RFC 6749 Appendix B, for the client id and secret of basic auth. */
const formEncode = (s: string): string => encodeURIComponent(s).replace(/%20/g, '+');

const OAUTH_ERROR_CODE = /^[a-z_]{1,64}$/;

async function readCapped(body: AsyncIterable<Buffer> & { destroy(): void }, max: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > max) {
      body.destroy();
      throw new TokenError(`token response over TIDINGS_MAX_RESPONSE_BYTES (${max} bytes)`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/** A token response's fields (RFC 6749 §5.1) → the token, or why it is not one. */
function tokenOf(json: unknown, fetchedAt: number, o: TokenCacheOptions): Token {
  if (typeof json !== 'object' || json === null) throw new TokenError('token response is not a JSON object');
  const fields = json as Record<string, unknown>;
  const value = fields['access_token'];
  if (typeof value !== 'string' || value === '' || /[\u0000-\u0020\u007f]/.test(value))
    throw new TokenError('token response has no usable access_token');
  const type = fields['token_type'];
  if (type !== undefined && (typeof type !== 'string' || type.toLowerCase() !== 'bearer'))
    throw new TokenError('token response has a token_type other than Bearer');
  const seconds = expiresInSeconds(fields['expires_in']);
  // Expired as it came (0 or less): used for the attempt that asked for it, never kept for another.
  if (seconds !== null && seconds <= 0) return { value, renewAt: -Infinity };
  const lifetimeMs = seconds === null ? o.defaultLifetimeMs : seconds * 1000;
  // Renewed early; a token that lives less than twice the margin is renewed at half its life.
  const margin = Math.min(o.earlyRefreshMs, lifetimeMs / 2);
  return { value, renewAt: fetchedAt + lifetimeMs - margin };
}

/**
 * `expires_in` (RFC 6749 §5.1, seconds) as a number: a JSON number, or a decimal numeric string (some providers send
 * `"3600"`); null when absent or anything else, and the default lifetime then applies.
 */
export function expiresInSeconds(value: unknown): number | null {
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value === 'string' && /^\s*-?\d+(\.\d+)?\s*$/.test(value)) return Number(value);
  return null;
}

async function fetchToken(grant: OAuth2ClientCredentials, o: TokenCacheOptions): Promise<Token> {
  const form = new URLSearchParams({ grant_type: 'client_credentials' });
  if (grant.scope !== null) form.set('scope', grant.scope);
  if (grant.audience !== null) form.set('audience', grant.audience);
  const basic = Buffer.from(`${formEncode(grant.clientId)}:${formEncode(grant.clientSecret)}`).toString('base64');
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), o.deadlineMs);
  const fetchedAt = o.nowMs();
  try {
    const res = await request(grant.tokenUrl, {
      dispatcher: o.agent,
      method: 'POST',
      headers: {
        authorization: `Basic ${basic}`,
        'content-type': 'application/x-www-form-urlencoded',
        accept: 'application/json',
        'user-agent': o.userAgent,
      },
      body: form.toString(),
      signal: controller.signal,
    });
    const body = await readCapped(res.body, o.maxResponseBytes);
    if (res.statusCode < 200 || res.statusCode > 299) {
      let code = '';
      try {
        const e = (JSON.parse(body.toString('utf8')) as { error?: unknown }).error;
        if (typeof e === 'string' && OAUTH_ERROR_CODE.test(e)) code = ` (${e})`;
      } catch {
        // not JSON: the status says enough
      }
      throw new TokenError(`token endpoint answered ${res.statusCode}${code}`);
    }
    let json: unknown;
    try {
      json = JSON.parse(body.toString('utf8'));
    } catch {
      throw new TokenError('token response is not JSON');
    }
    return tokenOf(json, fetchedAt, o);
  } catch (error) {
    if (error instanceof TokenError) throw error;
    if (controller.signal.aborted)
      throw new TokenError(`token endpoint: no answer within the attempt deadline of ${o.deadlineMs} ms`);
    const c = classifyError(error);
    // The guarded connector's refusals read as the delivery's do: no internal name or address (error-kinds.md).
    const why =
      c.errorKind === ErrorKind.blockedAddress
        ? 'refused address'
        : c.errorKind === ErrorKind.dns
          ? 'host name not resolved to an address that may be contacted'
          : c.detail;
    throw new TokenError(`token endpoint failed (${c.errorKind}): ${why}`);
  } finally {
    clearTimeout(timer);
  }
}

/** Makes a {@link TokenCache}. */
export function createTokenCache(o: TokenCacheOptions): TokenCache {
  const entries = new Map<string, Entry>();
  const touch = (key: string, entry: Entry): void => {
    entries.delete(key);
    entries.set(key, entry);
    for (const [k, e] of entries) {
      if (entries.size <= o.max) break;
      if (e.pending === undefined) entries.delete(k);
    }
  };
  return {
    get(key, grant) {
      const entry = entries.get(key) ?? {};
      touch(key, entry);
      if (entry.token !== undefined && o.nowMs() < entry.token.renewAt) return Promise.resolve(entry.token);
      if (entry.pending !== undefined) return entry.pending;
      const pending = fetchToken(grant, o).then(
        (token) => {
          if (entry.pending === pending) {
            if (token.renewAt === -Infinity) delete entry.token;
            else entry.token = token;
            delete entry.pending;
          }
          return token;
        },
        (error: unknown) => {
          if (entry.pending === pending) delete entry.pending;
          throw error;
        },
      );
      entry.pending = pending;
      return pending;
    },
    drop(key, token) {
      const entry = entries.get(key);
      if (entry?.token === token) delete entry.token;
    },
  };
}
