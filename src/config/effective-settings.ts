import { SETTINGS, type Config } from './config.ts';

/**
 * The effective configuration as text with its secrets masked: what `GET /api/v1/settings` (the console's
 * settings page) and `tidings config show` print. One rule for both, so neither can show more than the other.
 */

/** What a secret setting shows instead of its value. */
export const MASK = '••••••••';

/** One setting as shown: its effective value as text (secrets masked) beside its default. */
export interface EffectiveSetting {
  /** Name in the configuration (camelCase). */
  readonly name: string;
  /** Environment variable. */
  readonly env: string;
  /** Effective value as text, secrets masked; null = unset. */
  readonly value: string | null;
  /** The default as written in the configuration reference; null = unset. */
  readonly defaultValue: string | null;
  /** The effective value equals the default once both are parsed (so `5000` ms and `5s` agree). */
  readonly isDefault: boolean;
  readonly unit: string;
  readonly description: string;
  readonly secret: boolean;
}

/**
 * Query parameter names whose value is a secret in a URL setting (libpq's `password` and `sslpassword`,
 * and the names services give tokens and keys), compared in lower case; a name containing one of the
 * {@link SECRET_PARAM_PARTS} counts too (`api_key`, `access_token`, `X-Auth-Token`…).
 */
const SECRET_PARAM_PARTS: readonly string[] = [
  'password',
  'passwd',
  'pwd',
  'pass',
  'token',
  'key',
  'secret',
  'auth',
  'credential',
  'sig',
];

/** Stands for {@link MASK} while the URL is rebuilt (the URL parser would percent-encode the mask's dots). */
const PLACEHOLDER = 'TIDINGS-MASKED-VALUE';

/** Whether a URL query parameter named `name` holds a secret (see {@link SECRET_PARAM_PARTS}). */
export function isSecretParam(name: string): boolean {
  const lower = name.toLowerCase();
  return SECRET_PARAM_PARTS.some((part) => lower.includes(part));
}

/**
 * A URL with its secrets replaced by {@link MASK}: the password of its userinfo, and the value of every query
 * parameter that names a secret ({@link isSecretParam}: `?password=`, `sslpassword`, `token`, `api_key`…).
 * Text that is not a URL is masked whole (it may be a malformed URL that still carries a password).
 */
export function maskUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return MASK;
  }
  if (url.password !== '') url.password = PLACEHOLDER;
  if (url.search !== '') {
    const masked = url.search
      .slice(1)
      .split('&')
      .map((pair) => {
        const eq = pair.indexOf('=');
        const name = decodeURIComponentSafe(eq < 0 ? pair : pair.slice(0, eq));
        return eq >= 0 && isSecretParam(name) ? `${pair.slice(0, eq)}=${PLACEHOLDER}` : pair;
      });
    url.search = `?${masked.join('&')}`;
  }
  return url.toString().replaceAll(PLACEHOLDER, MASK);
}

/** `decodeURIComponent`, or the text itself when it is not valid percent-encoding (then nothing matches less). */
function decodeURIComponentSafe(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return text;
  }
}

/** A value that reads as an absolute URL (`scheme://…`): masked as one, whatever the setting's unit says. */
const LOOKS_LIKE_URL = /^[a-z][a-z0-9+.-]*:\/\//i;

/** One effective value as text: secrets masked, URLs with their password and secret parameters masked. */
function shownValue(unit: string, raw: unknown): string | null {
  if (raw === undefined) return null;
  if (unit === 'secret') return MASK;
  if (unit === 'URL' || (typeof raw === 'string' && LOOKS_LIKE_URL.test(raw))) return maskUrl(String(raw));
  if (Array.isArray(raw)) {
    return raw
      .map((v) =>
        typeof v === 'object' ? JSON.stringify(v) : LOOKS_LIKE_URL.test(String(v)) ? maskUrl(String(v)) : String(v),
      )
      .join(',');
  }
  return String(raw);
}

/**
 * The effective configuration as text, one row per setting of `SETTINGS` (src/config/config.ts): values of
 * settings whose unit is `secret` are replaced by {@link MASK}; in every value that is a URL (a setting of unit
 * `URL`, or any value of the form `scheme://…`), the userinfo's password and secret query parameters too
 * ({@link maskUrl}).
 */
export function effectiveSettings(config: Config): { data: EffectiveSetting[] } {
  const data = (Object.keys(SETTINGS) as (keyof Config)[]).map((name) => {
    const s = SETTINGS[name];
    const raw: unknown = config[name];
    const parsedDefault = s.schema.safeParse(s.defaultValue);
    const isDefault = parsedDefault.success && JSON.stringify(parsedDefault.data) === JSON.stringify(raw);
    return {
      name,
      env: s.env,
      value: shownValue(s.unit, raw),
      defaultValue: s.defaultValue ?? null,
      isDefault,
      unit: s.unit,
      description: s.description,
      secret: s.unit === 'secret',
    };
  });
  return { data };
}
