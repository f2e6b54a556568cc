import { Webhook, WebhookVerificationError } from 'standardwebhooks';

/** Request headers as node:http, Express and Fastify hand them over (names in any case). */
export type IncomingHeaders = Readonly<Record<string, string | readonly string[] | undefined>>;

/**
 * The widest timestamp tolerance, in seconds: the `standardwebhooks` library itself refuses a timestamp more than
 * five minutes from the machine's clock, so a receiver can narrow this window but never widen it.
 */
export const MAX_TOLERANCE_SECONDS = 300;

/** Default of {@link VerifierOptions.toleranceSeconds}: the Standard Webhooks recommendation, five minutes. */
export const DEFAULT_TOLERANCE_SECONDS = 300;

/** Options of {@link createVerifier}. */
export interface VerifierOptions {
  /**
   * The endpoint's signing secret (`whsec_…`), or several during a rotation on the receiver's side: a request
   * signed with any of them is accepted.
   */
  readonly secret: string | readonly string[];
  /**
   * Largest difference, in seconds, between `webhook-timestamp` and this receiver's clock, in either direction
   * (1 to {@link MAX_TOLERANCE_SECONDS}; default {@link DEFAULT_TOLERANCE_SECONDS}). A request outside it is
   * refused as stale (a replay) or from the future. Tidings stamps every attempt, retries included, when it is
   * sent, so a retry is never stale.
   */
  readonly toleranceSeconds?: number;
  /** The clock, in Unix milliseconds (default `Date.now`); a test steers it to make a request stale. */
  readonly nowMs?: () => number;
}

/** A request that passed both checks: its message id and the attempt's timestamp. */
export interface Verified {
  readonly ok: true;
  /** `webhook-id`: the message id, the same on every retry of one message. */
  readonly id: string;
  /** `webhook-timestamp`: when this attempt was sent, Unix seconds. */
  readonly timestampSeconds: number;
}

/** Why a request was refused: 400 for missing or malformed headers, 401 for a bad signature or timestamp. */
export interface Refused {
  readonly ok: false;
  readonly status: 400 | 401;
  /** Stable snake_case code (see the package README). */
  readonly code: 'signature_headers_missing' | 'timestamp_invalid' | 'timestamp_out_of_tolerance' | 'signature_invalid';
  readonly detail: string;
}

/** Checks one request's signature and timestamp over its exact body bytes. */
export type Verifier = (headers: IncomingHeaders, body: Buffer) => Verified | Refused;

/** The first value of a header, whatever the case of its name. */
export function headerValue(headers: IncomingHeaders, name: string): string | undefined {
  const direct = headers[name];
  const value =
    direct !== undefined ? direct : Object.entries(headers).find(([key]) => key.toLowerCase() === name)?.[1];
  if (value === undefined) return undefined;
  return typeof value === 'string' ? value : value[0];
}

/**
 * Builds a {@link Verifier}. The three headers are read as `webhook-*` (Standard Webhooks) or, when
 * `webhook-id` is absent, as `svix-*` (Tidings sends both by default; `TIDINGS_SIGNATURE_HEADERS`). The
 * timestamp is checked against `toleranceSeconds` first; the signature is then verified by the
 * `standardwebhooks` library (constant-time comparison, every `v1,` entry of a rotation).
 * @throws RangeError for a tolerance outside 1–300 s; Error for an empty or malformed secret (at start-up).
 */
export function createVerifier(options: VerifierOptions): Verifier {
  const toleranceSeconds = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  if (!Number.isInteger(toleranceSeconds) || toleranceSeconds < 1 || toleranceSeconds > MAX_TOLERANCE_SECONDS) {
    throw new RangeError(
      `toleranceSeconds must be a whole number from 1 to ${MAX_TOLERANCE_SECONDS}, got ${toleranceSeconds}`,
    );
  }
  const secrets = typeof options.secret === 'string' ? [options.secret] : [...options.secret];
  if (secrets.length === 0) throw new Error('secret: give at least one signing secret (whsec_…)');
  const webhooks = secrets.map((secret) => new Webhook(secret));
  const nowMs = options.nowMs ?? Date.now;
  return (headers, body) => {
    const prefix = headerValue(headers, 'webhook-id') !== undefined ? 'webhook' : 'svix';
    const id = headerValue(headers, `${prefix}-id`);
    const timestamp = headerValue(headers, `${prefix}-timestamp`);
    const signature = headerValue(headers, `${prefix}-signature`);
    const present: readonly (readonly [string, string | undefined])[] = [
      [`${prefix}-id`, id],
      [`${prefix}-timestamp`, timestamp],
      [`${prefix}-signature`, signature],
    ];
    const missing = present.filter(([, value]) => value === undefined || value === '').map(([name]) => name);
    if (missing.length > 0 || id === undefined || timestamp === undefined || signature === undefined) {
      // Neither id header: the sender may use either naming, so both are named.
      const names =
        prefix === 'svix' && missing.includes('svix-id')
          ? missing.map((name) => `${name.replace(/^svix-/, 'webhook-')} (or ${name})`)
          : missing;
      return refuse(400, 'signature_headers_missing', `missing header: ${names.join(', ')}`);
    }
    if (!/^\d{1,12}$/.test(timestamp))
      return refuse(400, 'timestamp_invalid', `${prefix}-timestamp must be Unix seconds`);
    const timestampSeconds = Number(timestamp);
    const skewSeconds = Math.floor(nowMs() / 1000) - timestampSeconds;
    if (Math.abs(skewSeconds) > toleranceSeconds) {
      const which = skewSeconds > 0 ? `${skewSeconds} s old` : `${-skewSeconds} s in the future`;
      return refuse(
        401,
        'timestamp_out_of_tolerance',
        `${prefix}-timestamp is ${which} (tolerance ${toleranceSeconds} s)`,
      );
    }
    const standard = { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': signature };
    for (const webhook of webhooks) {
      try {
        webhook.verify(body, standard, { jsonParse: false });
        return { ok: true, id, timestampSeconds };
      } catch (error) {
        if (!(error instanceof WebhookVerificationError)) throw error;
      }
    }
    return refuse(401, 'signature_invalid', `no ${prefix}-signature matches the body with the endpoint secret`);
  };
}

function refuse(status: Refused['status'], code: Refused['code'], detail: string): Refused {
  return { ok: false, status, code, detail };
}
