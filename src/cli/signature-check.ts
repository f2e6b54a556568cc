import { timingSafeEqual } from 'node:crypto';
import { decodeSecret, SECRET_PREFIX, signingKeyId, signV1 } from '../domain/signing.ts';

/**
 * Why a captured webhook request does or does not verify (Standard Webhooks 1.0.0, the scheme of
 * src/domain/signing.ts): which header is missing, whether a signature matches, whether the timestamp is
 * within the tolerance, and — when one of a few common changes to the body (a trailing newline, CRLF line
 * ends, JSON re-serialised) makes it verify — that the body was changed. An HMAC cannot tell a wrong secret
 * from any other change of the body; the answer says so.
 */

/** The tolerance of Standard Webhooks verifiers (and of the `standardwebhooks` and `svix` libraries), seconds. */
export const DEFAULT_TOLERANCE_S = 300;

/** Why a request does not verify. */
export type VerifyFailure =
  | 'header_missing'
  | 'header_malformed'
  | 'body_changed'
  | 'signature_mismatch'
  | 'timestamp_stale'
  | 'timestamp_future';

/** The verdict on one captured request. */
export type Verdict =
  | {
      readonly ok: true;
      readonly msgId: string;
      readonly timestamp: number;
      readonly keyId: string;
      readonly message: string;
    }
  | { readonly ok: false; readonly reason: VerifyFailure; readonly keyId: string | null; readonly message: string };

/** A secret as `whsec_<base64>`; the bare base64 is accepted too (what some tools print). */
export function secretKey(secret: string): Buffer {
  return decodeSecret(secret.startsWith(SECRET_PREFIX) ? secret : `${SECRET_PREFIX}${secret}`);
}

/**
 * Parses a headers file: a JSON object of names to values, or `Name: value` lines as captured from a request
 * (a request line such as `POST /hook HTTP/1.1` is skipped; a blank line after the headers ends them). Names
 * are returned in lower case.
 */
export function parseHeaders(text: string): Record<string, string> {
  const trimmed = text.trim();
  if (trimmed.startsWith('{')) {
    const parsed = JSON.parse(trimmed) as Record<string, unknown>;
    return Object.fromEntries(
      Object.entries(parsed).map(([k, v]) => [k.toLowerCase(), Array.isArray(v) ? v.join(' ') : String(v)]),
    );
  }
  const out: Record<string, string> = {};
  let started = false;
  for (const raw of text.split(/\r?\n/)) {
    if (raw.trim() === '') {
      if (started) break;
      continue;
    }
    const colon = raw.indexOf(':');
    if (colon <= 0 || /^[A-Z]+ \S+ HTTP\/\d/.test(raw)) continue;
    started = true;
    out[raw.slice(0, colon).trim().toLowerCase()] = raw.slice(colon + 1).trim();
  }
  return out;
}

/** Changes a body commonly goes through between the wire and a file, each undone to see if it verifies. */
function bodyVariants(body: Buffer): readonly (readonly [string, Buffer])[] {
  const text = body.toString('utf8');
  const variants: [string, Buffer][] = [];
  if (text.endsWith('\n')) variants.push(['a trailing newline was added', Buffer.from(text.replace(/\r?\n$/, ''))]);
  else variants.push(['the trailing newline was removed', Buffer.from(`${text}\n`)]);
  if (text.includes('\r\n'))
    variants.push(['line ends were changed to CRLF', Buffer.from(text.replaceAll('\r\n', '\n'))]);
  try {
    const parsed: unknown = JSON.parse(text);
    variants.push(['the JSON was re-serialised (spacing or indentation changed)', Buffer.from(JSON.stringify(parsed))]);
    variants.push([
      'the JSON was re-serialised (spacing or indentation changed)',
      Buffer.from(JSON.stringify(parsed, null, 2)),
    ]);
  } catch {
    // Not JSON: no re-serialisation to undo.
  }
  return variants.filter(([, b]) => !b.equals(body));
}

/** The first of `set` that is present (`webhook-…` or `svix-…`), or null. */
function header(headers: Readonly<Record<string, string>>, name: 'id' | 'timestamp' | 'signature'): string | null {
  return headers[`webhook-${name}`] ?? headers[`svix-${name}`] ?? null;
}

/** Whether one of the `v1,<base64>` entries of a signature header equals `expected`. */
function matches(entries: readonly string[], expected: string): boolean {
  const want = Buffer.from(expected);
  return entries.some((e) => {
    const got = Buffer.from(e);
    return got.length === want.length && timingSafeEqual(got, want);
  });
}

/**
 * Verifies a captured request and says why it fails.
 * @param key the secret's key bytes ({@link secretKey})
 * @param nowS this host's time, Unix seconds
 */
export function checkSignature(
  headers: Readonly<Record<string, string>>,
  body: Buffer,
  key: Buffer,
  nowS: number,
  toleranceS = DEFAULT_TOLERANCE_S,
): Verdict {
  const keyId = signingKeyId(key);
  const id = header(headers, 'id');
  const ts = header(headers, 'timestamp');
  const sig = header(headers, 'signature');
  const missing = [
    ['id', id],
    ['timestamp', ts],
    ['signature', sig],
  ]
    .filter(([, v]) => v === null)
    .map(([n]) => `webhook-${n} (or svix-${n})`);
  if (missing.length > 0)
    return { ok: false, reason: 'header_missing', keyId, message: `header missing: ${missing.join(', ')}` };
  for (const name of ['id', 'timestamp', 'signature'] as const) {
    const a = headers[`webhook-${name}`];
    const b = headers[`svix-${name}`];
    if (a !== undefined && b !== undefined && a !== b)
      return { ok: false, reason: 'header_malformed', keyId, message: `webhook-${name} and svix-${name} differ` };
  }
  if (!/^\d{1,12}$/.test(ts!))
    return {
      ok: false,
      reason: 'header_malformed',
      keyId,
      message: `webhook-timestamp "${ts}" is not whole seconds since 1970`,
    };
  const entries = sig!.split(' ').filter((e) => e.startsWith('v1,'));
  if (entries.length === 0)
    return { ok: false, reason: 'header_malformed', keyId, message: 'webhook-signature holds no v1,<base64> entry' };
  const timestamp = Number(ts);
  const skewS = nowS - timestamp;
  const age = skewS >= 0 ? `${skewS} s old` : `${-skewS} s in the future`;
  if (!matches(entries, signV1(key, id!, timestamp, body))) {
    const changed = bodyVariants(body).find(([, variant]) => matches(entries, signV1(key, id!, timestamp, variant)));
    if (changed !== undefined) {
      return {
        ok: false,
        reason: 'body_changed',
        keyId,
        message: `body changed: the signature matches the body before ${changed[0]}; verify over the raw request bytes`,
      };
    }
    const several =
      entries.length > 1
        ? ` (the header carries ${entries.length} signatures, as during a secret rotation: none matches)`
        : '';
    return {
      ok: false,
      reason: 'signature_mismatch',
      keyId,
      message:
        `no signature matches${several}: wrong secret (this one is ${keyId}; an attempt's operatorDetail ` +
        'names the keys that signed it), ' +
        'or the body is not the bytes that were sent — an HMAC cannot tell the two apart',
    };
  }
  if (skewS > toleranceS)
    return {
      ok: false,
      reason: 'timestamp_stale',
      keyId,
      message:
        `stale timestamp: signed ${age}, beyond the ${toleranceS} s tolerance ` +
        '(a replayed request, or this clock is off)',
    };
  if (-skewS > toleranceS)
    return {
      ok: false,
      reason: 'timestamp_future',
      keyId,
      message: `timestamp ${age}, beyond the ${toleranceS} s tolerance: the sender's or this clock is off`,
    };
  return { ok: true, msgId: id!, timestamp, keyId, message: `valid: ${id} signed ${age} with ${keyId}` };
}
