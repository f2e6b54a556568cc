import type { SendResult } from '../../domain/attempt-outcome.ts';
import { ErrorKind } from '../../domain/error-kinds.ts';
import type { BasicAuth, ClientCertificate, VersionedReceiverAuth } from '../../domain/receiver-auth.ts';
import type { OutboundRequest } from '../../ports/sender.ts';
import { TokenError, type Token, type TokenCache } from './oauth2-tokens.ts';

/** Receiver authentication's settings of a sender (src/config/config.ts). */
export interface ReceiverAuthSettings {
  /** Most OAuth2 tokens and TLS client pools a sender keeps (TIDINGS_RECEIVER_AUTH_CACHE_MAX). */
  readonly cacheMax: number;
  /** A token is fetched again this long before it expires, ms (TIDINGS_OAUTH2_TOKEN_EARLY_REFRESH). */
  readonly tokenEarlyRefreshMs: number;
  /** How long a token without `expires_in` is used, ms (TIDINGS_OAUTH2_TOKEN_DEFAULT_LIFETIME). */
  readonly tokenDefaultLifetimeMs: number;
}

/** What {@link sendWithReceiverAuth} adds to one plain send. */
export interface PlainExtra {
  /** The `Authorization` value, replacing any header of that name. */
  readonly authorization?: string;
  /** The TLS client certificate of the connection, with the receiver-auth version its pool is keyed by. */
  readonly tls?: ClientCertificate & { readonly version: string };
  /** When the attempt started (`performance.now()`): the duration counts the token's wait. */
  readonly startedAt?: number;
  /** Ms of the attempt's deadline already spent (on the token). */
  readonly spentMs?: number;
}

/** One request as the sender makes it without receiver auth, with {@link PlainExtra}. */
export type PlainSend = (
  request: OutboundRequest,
  signal: AbortSignal | undefined,
  extra?: PlainExtra,
) => Promise<SendResult>;

/** Dependencies of {@link sendWithReceiverAuth}. */
export interface ReceiverAuthSendDeps {
  readonly plain: PlainSend;
  readonly tokens: TokenCache;
  /** The sender's deadline (TIDINGS_ATTEMPT_DEADLINE), when the request has none of its own. */
  readonly deadlineMs: number;
}

/** `Authorization: Basic` of RFC 7617, UTF-8. */
export function basicAuthorization(basic: BasicAuth): string {
  return `Basic ${Buffer.from(`${basic.username}:${basic.password}`, 'utf8').toString('base64')}`;
}

/** What replaces a secret the sender added when a receiver echoes it back. */
export const REDACTED = '••••';

/**
 * The secrets of an `Authorization` value the sender added, in every form a receiver may echo: the whole value, the
 * bearer token, the basic `user:pass` and its base64. Longest first, so a shorter one is not found inside a longer.
 */
export function secretsOf(authorization: string): string[] {
  const [scheme = '', value = ''] = authorization.split(' ', 2);
  const forms = [authorization, value];
  if (scheme === 'Basic') forms.push(Buffer.from(value, 'base64').toString('utf8'));
  return [...new Set(forms.filter((f) => f.length > 0))].sort((a, b) => b.length - a.length);
}

/** Each secret replaced; and a secret's beginning (4 characters or more) at the end, where the prefix was cut. */
function redact(text: string, secrets: readonly string[]): string {
  let out = secrets.reduce((t, secret) => t.split(secret).join(REDACTED), text);
  for (const secret of secrets)
    for (let k = secret.length - 1; k >= 4; k -= 1)
      if (out.endsWith(secret.slice(0, k))) {
        out = out.slice(0, -k) + REDACTED;
        break;
      }
  return out;
}

/**
 * A result with the secrets of `authorization` replaced by {@link REDACTED} in what is recorded of the response (its
 * body prefix, `Location`, `Retry-After`): a receiver that echoes the request's headers must not put the credentials
 * in the attempt log, which the application's portal token reads.
 */
export function redactResult(result: SendResult, authorization: string | undefined): SendResult {
  if (authorization === undefined || result.type !== 'response') return result;
  const secrets = secretsOf(authorization);
  return {
    ...result,
    bodyPrefix: redact(result.bodyPrefix, secrets),
    location: result.location === null ? null : redact(result.location, secrets),
    retryAfter: result.retryAfter === null ? null : redact(result.retryAfter, secrets),
  };
}

const elapsed = (startedAt: number): number => Math.max(0, Math.round(performance.now() - startedAt));

/** A token for the attempt, or the attempt's result when none came in time: `receiver_auth`, deadline, abort. */
function tokenWithin(
  tokens: TokenCache,
  key: string,
  grant: NonNullable<VersionedReceiverAuth['auth']['oauth2']>,
  startedAt: number,
  deadlineMs: number,
  signal: AbortSignal | undefined,
): Promise<Token | SendResult> {
  const left = deadlineMs - (performance.now() - startedAt);
  const fail = (errorKind: ErrorKind, detail: string): SendResult => ({
    type: 'error',
    errorKind,
    detail,
    durationMs: elapsed(startedAt),
  });
  if (signal?.aborted === true) return Promise.resolve(fail(ErrorKind.deadline, 'aborted'));
  if (left <= 0) return Promise.resolve(fail(ErrorKind.deadline, `attempt deadline of ${deadlineMs} ms passed`));
  return new Promise((resolve) => {
    const done = (value: Token | SendResult): void => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      resolve(value);
    };
    const onAbort = (): void => done(fail(ErrorKind.deadline, 'aborted'));
    const timer = setTimeout(
      // Waiting on nothing but the token endpoint: its failure to answer in time is the attempt's outcome.
      () =>
        done(fail(ErrorKind.receiverAuth, `token endpoint: no answer within the attempt deadline of ${deadlineMs} ms`)),
      left,
    );
    signal?.addEventListener('abort', onAbort, { once: true });
    tokens
      .get(key, grant)
      .then(done, (error: unknown) =>
        done(
          fail(
            ErrorKind.receiverAuth,
            error instanceof TokenError ? error.detail : 'token endpoint failed: unexpected error',
          ),
        ),
      );
  });
}

/**
 * One attempt with the endpoint's receiver authentication (docs/adr/0028-receiver-authentication.md): basic
 * credentials or an OAuth2 bearer token as `Authorization`, and the TLS client certificate's own pool. With OAuth2,
 * a 401 from the receiver drops the token used and the request is made once more with a fresh one, within the same
 * deadline; a token endpoint that fails ends the attempt as `receiver_auth`, nothing sent to the receiver.
 */
export async function sendWithReceiverAuth(
  request: OutboundRequest,
  receiverAuth: VersionedReceiverAuth,
  signal: AbortSignal | undefined,
  deps: ReceiverAuthSendDeps,
): Promise<SendResult> {
  const startedAt = performance.now();
  const { auth, version } = receiverAuth;
  const base: PlainExtra = { startedAt, ...(auth.mtls === undefined ? {} : { tls: { ...auth.mtls, version } }) };
  if (auth.basic !== undefined) {
    const authorization = basicAuthorization(auth.basic);
    return redactResult(await deps.plain(request, signal, { ...base, authorization }), authorization);
  }
  const grant = auth.oauth2;
  if (grant === undefined) return deps.plain(request, signal, base);
  const deadlineMs = request.deadlineMs ?? deps.deadlineMs;
  const key = `${request.poolKey ?? ''}\u0000${version}`;
  const token = await tokenWithin(deps.tokens, key, grant, startedAt, deadlineMs, signal);
  if ('type' in token) return token;
  const bearer = (t: Token): PlainExtra => ({
    ...base,
    authorization: `Bearer ${t.value}`,
    spentMs: performance.now() - startedAt,
  });
  const first = redactResult(await deps.plain(request, signal, bearer(token)), `Bearer ${token.value}`);
  if (first.type !== 'response' || first.statusCode !== 401) return first;
  // Refused once: the token may have been revoked or rotated early. One fresh token, one more request.
  deps.tokens.drop(key, token);
  const fresh = await tokenWithin(deps.tokens, key, grant, startedAt, deadlineMs, signal);
  if ('type' in fresh) return fresh.type === 'error' && fresh.errorKind === ErrorKind.receiverAuth ? fresh : first;
  return redactResult(await deps.plain(request, signal, bearer(fresh)), `Bearer ${fresh.value}`);
}
