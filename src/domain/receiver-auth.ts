import { createPrivateKey, X509Certificate, type KeyObject } from 'node:crypto';
import ipaddr from 'ipaddr.js';
import { checkUrlForm, checkUrlHost, isAddressAllowed } from './egress-policy.ts';
import type { ValidationIssue } from './errors.ts';

/**
 * How Tidings authenticates to an endpoint's receiver (docs/adr/0028-receiver-authentication.md): HTTP basic
 * credentials or an OAuth2 client-credentials token (each sets the request's `Authorization`, so at most one), and
 * independently a TLS client certificate with an optional private CA for the receiver's server certificate. Stored
 * encrypted as one JSON value; the API shows {@link receiverAuthSummary} only.
 */
export interface ReceiverAuth {
  readonly basic?: BasicAuth;
  readonly oauth2?: OAuth2ClientCredentials;
  readonly mtls?: ClientCertificate;
}

/** HTTP basic credentials (RFC 7617), sent as `Authorization: Basic …` on every request. */
export interface BasicAuth {
  readonly username: string;
  readonly password: string;
}

/** An OAuth2 client-credentials grant (RFC 6749 §4.4); the token is sent as `Authorization: Bearer …`. */
export interface OAuth2ClientCredentials {
  readonly tokenUrl: string;
  readonly clientId: string;
  readonly clientSecret: string;
  readonly scope: string | null;
  readonly audience: string | null;
}

/**
 * The TLS side: a client certificate and its key (PEM; both or neither), and the PEM CA bundle that the receiver's
 * certificate must chain to (null: the system's trusted roots). At least the certificate or the CA.
 */
export interface ClientCertificate {
  readonly certificate: string | null;
  readonly key: string | null;
  readonly ca: string | null;
}

/** Receiver auth as a dispatcher uses it: `version` changes with every write, so caches keyed by it never go stale. */
export interface VersionedReceiverAuth {
  readonly version: string;
  readonly auth: ReceiverAuth;
}

/**
 * Longest text of each field, in characters; a PEM field (a certificate chain or a CA bundle of a few certificates)
 * in UTF-8 bytes, line breaks included.
 */
export const RECEIVER_AUTH_LIMITS = Object.freeze({ text: 1024, url: 2048, pem: 32 * 1024 });

/** The masked form of a secret: never more than its last 2 characters, and those only when it is 16 or longer. */
export function maskSecret(secret: string): string {
  return secret.length >= 16 ? `••••${secret.slice(-2)}` : '••••';
}

const CONTROL = /[\u0000-\u001f\u007f]/;
const PEM_BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----[\s\S]+?-----END \1-----/g;

type Issues = ValidationIssue[];

function issue(issues: Issues, loc: readonly string[], msg: string, type = 'value_error'): void {
  issues.push({ loc: ['body', ...loc], msg, type });
}

function text(issues: Issues, loc: readonly string[], value: string, max: number, allowEmpty = false): void {
  if (!allowEmpty && value.length === 0) issue(issues, loc, 'must not be empty');
  else if (value.length > max) issue(issues, loc, `must be at most ${max} characters`);
  else if (CONTROL.test(value)) issue(issues, loc, 'must not contain control characters');
}

/**
 * The rule of a token URL: https; or http only to a literal IP address that the egress policy refuses by default and
 * `allowlist` (TIDINGS_EGRESS_ALLOWLIST) opens, an operator's private network (the client secret crosses it in
 * clear). No credentials in it, no fragment; a literal address must be one the egress policy allows.
 */
export function tokenUrlIssue(value: string, allowlist: readonly string[]): string | null {
  // The endpoint URL's rules of form (egress-policy.ts): nothing the parser would drop or read otherwise.
  const form = checkUrlForm(value);
  if (form !== null) return form;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'must be an absolute URL';
  }
  if (url.username !== '' || url.password !== '') return 'must not carry credentials';
  if (url.hash !== '') return 'must not have a fragment';
  if (url.port === '0') return 'port 0 cannot be connected to';
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  const literal = ipaddr.IPv4.isValidFourPartDecimal(host) || ipaddr.IPv6.isValid(host);
  if (url.protocol === 'http:') {
    const opened = literal && !isAddressAllowed(host, []).allowed && isAddressAllowed(host, allowlist).allowed;
    if (!opened) return 'must be https (http only to a literal private address that TIDINGS_EGRESS_ALLOWLIST opens)';
  } else if (url.protocol !== 'https:') return 'must be https';
  const verdict = checkUrlHost(url.hostname, allowlist);
  if (!verdict.allowed) return `points at a refused address: ${verdict.reason}`;
  return null;
}

function pemBlocks(value: string, label: string): string[] {
  return [...value.matchAll(PEM_BLOCK)].filter((m) => m[1] === label).map((m) => m[0]);
}

/** Parses every CERTIFICATE block of `value`; an issue at `loc` when there is none or one does not parse. */
function certificates(issues: Issues, loc: readonly string[], value: string): X509Certificate[] | null {
  const blocks = pemBlocks(value, 'CERTIFICATE');
  if (blocks.length === 0) {
    issue(issues, loc, 'must hold a PEM certificate (-----BEGIN CERTIFICATE-----)', 'pem_error');
    return null;
  }
  const parsed: X509Certificate[] = [];
  for (const [i, block] of blocks.entries()) {
    try {
      parsed.push(new X509Certificate(block));
    } catch {
      issue(issues, loc, `PEM certificate ${i + 1} does not parse`, 'pem_error');
      return null;
    }
  }
  return parsed;
}

function privateKey(issues: Issues, loc: readonly string[], value: string): KeyObject | null {
  if (/-----BEGIN ENCRYPTED PRIVATE KEY-----/.test(value) || /Proc-Type: 4,ENCRYPTED/.test(value)) {
    issue(issues, loc, 'must be an unencrypted PEM private key', 'pem_error');
    return null;
  }
  try {
    return createPrivateKey({ key: value, format: 'pem' });
  } catch {
    issue(issues, loc, 'must be a PEM private key (PKCS#8, PKCS#1 or SEC1)', 'pem_error');
    return null;
  }
}

function checkMtls(issues: Issues, m: ClientCertificate): void {
  const limit = RECEIVER_AUTH_LIMITS.pem;
  const before = issues.length;
  if (m.certificate === null && m.ca === null) issue(issues, ['mtls'], 'set certificate and key, or ca, or all three');
  if ((m.certificate === null) !== (m.key === null))
    issue(issues, ['mtls', m.key === null ? 'key' : 'certificate'], 'certificate and key go together');
  for (const field of ['certificate', 'key', 'ca'] as const) {
    const value = m[field];
    if (value === null) continue;
    if (Buffer.byteLength(value, 'utf8') > limit) issue(issues, ['mtls', field], `must be at most ${limit} bytes`);
    else text(issues, ['mtls', field], value.replace(/\r?\n/g, ''), limit);
  }
  if (issues.length > before) return;
  const chain = m.certificate === null ? null : certificates(issues, ['mtls', 'certificate'], m.certificate);
  const key = m.key === null ? null : privateKey(issues, ['mtls', 'key'], m.key);
  if (m.ca !== null) certificates(issues, ['mtls', 'ca'], m.ca);
  const leaf = chain?.[0];
  if (leaf !== undefined && key !== null && !leaf.checkPrivateKey(key))
    issue(issues, ['mtls', 'key'], 'does not match mtls.certificate (its first certificate)');
}

/**
 * Every problem of `auth`, each naming its field (`body.basic.username`, `body.mtls.key`, …): sizes and control
 * characters, basic and oauth2 together, the token URL's rule ({@link tokenUrlIssue}), PEM that does not parse, and a
 * key that does not match its certificate. Empty = valid.
 */
export function receiverAuthIssues(auth: ReceiverAuth, allowlist: readonly string[]): ValidationIssue[] {
  const issues: Issues = [];
  const { text: max, url: urlMax } = RECEIVER_AUTH_LIMITS;
  if (auth.basic === undefined && auth.oauth2 === undefined && auth.mtls === undefined)
    issue(issues, [], 'set at least one of basic, oauth2 and mtls (DELETE removes receiver authentication)');
  if (auth.basic !== undefined && auth.oauth2 !== undefined)
    issue(issues, ['oauth2'], 'basic and oauth2 both set the Authorization header: set one of them');
  if (auth.basic !== undefined) {
    text(issues, ['basic', 'username'], auth.basic.username, max);
    if (auth.basic.username.includes(':')) issue(issues, ['basic', 'username'], 'must not contain ":" (RFC 7617)');
    text(issues, ['basic', 'password'], auth.basic.password, max);
  }
  if (auth.oauth2 !== undefined) {
    const o = auth.oauth2;
    text(issues, ['oauth2', 'tokenUrl'], o.tokenUrl, urlMax);
    const urlIssue = o.tokenUrl.length <= urlMax ? tokenUrlIssue(o.tokenUrl, allowlist) : null;
    if (urlIssue !== null) issue(issues, ['oauth2', 'tokenUrl'], urlIssue, 'url_error');
    text(issues, ['oauth2', 'clientId'], o.clientId, max);
    text(issues, ['oauth2', 'clientSecret'], o.clientSecret, max);
    if (o.scope !== null) text(issues, ['oauth2', 'scope'], o.scope, max);
    if (o.audience !== null) text(issues, ['oauth2', 'audience'], o.audience, max);
  }
  if (auth.mtls !== undefined) checkMtls(issues, auth.mtls);
  return issues;
}

/** A certificate as the API shows it: who it names, who issued it, until when, and its SHA-256 fingerprint. */
export interface CertificateSummary {
  readonly subject: string;
  readonly issuer: string;
  readonly validTo: string;
  readonly fingerprint256: string;
}

/** What the API shows of receiver auth: no secret, at most its {@link maskSecret} hint. */
export interface ReceiverAuthSummary {
  readonly basic: { readonly username: string; readonly password: string } | null;
  readonly oauth2: {
    readonly tokenUrl: string;
    readonly clientId: string;
    readonly clientSecret: string;
    readonly scope: string | null;
    readonly audience: string | null;
  } | null;
  readonly mtls: {
    readonly certificate: CertificateSummary | null;
    readonly key: string | null;
    readonly ca: readonly CertificateSummary[] | null;
  } | null;
}

function certificateSummary(pem: string): CertificateSummary[] {
  return pemBlocks(pem, 'CERTIFICATE').map((block) => {
    const c = new X509Certificate(block);
    return {
      subject: c.subject.replace(/\n/g, ', '),
      issuer: c.issuer.replace(/\n/g, ', '),
      validTo: new Date(c.validTo).toISOString(),
      fingerprint256: c.fingerprint256,
    };
  });
}

/** The summary of a valid `auth` (see {@link receiverAuthIssues}), stored beside its ciphertext. */
export function receiverAuthSummary(auth: ReceiverAuth): ReceiverAuthSummary {
  const b = auth.basic;
  const o = auth.oauth2;
  const m = auth.mtls;
  return {
    basic: b === undefined ? null : { username: b.username, password: maskSecret(b.password) },
    oauth2:
      o === undefined
        ? null
        : {
            tokenUrl: o.tokenUrl,
            clientId: o.clientId,
            clientSecret: maskSecret(o.clientSecret),
            scope: o.scope,
            audience: o.audience,
          },
    mtls:
      m === undefined
        ? null
        : {
            certificate: m.certificate === null ? null : certificateSummary(m.certificate)[0]!,
            key: m.key === null ? null : '••••',
            ca: m.ca === null ? null : certificateSummary(m.ca),
          },
  };
}
