import { z } from 'zod';
import { SETTINGS, type Config } from '../../config/config.ts';
import type { Api, HttpDeps } from '../deps.ts';
import { commonErrors } from '../schemas/common.ts';

/** What a secret setting shows instead of its value. */
export const MASK = '••••••••';

const settingOut = z.object({
  name: z.string().describe('Name in the configuration (camelCase)'),
  env: z.string().describe('Environment variable'),
  value: z.string().nullable().describe('Effective value as text (secrets masked; in URLs the password and secret query parameters such as password, sslpassword, token, key masked); null = unset'),
  defaultValue: z.string().nullable().describe('The default as written in the configuration reference (e.g. `5s`); null = unset'),
  isDefault: z.boolean().describe('The effective value equals the default once both are parsed (so `5000` ms and `5s` agree)'),
  unit: z.string(),
  description: z.string(),
  secret: z.boolean(),
}).meta({ id: 'SettingOut' });

const settingsOut = z.object({ data: z.array(settingOut) }).meta({ id: 'SettingsOut' });

const brandingOut = z.object({
  name: z.string(), logoUrl: z.string().nullable(), accentColor: z.string().describe('#rrggbb'),
}).meta({ id: 'PortalBrandingOut' });

/**
 * Query parameter names whose value is a secret in a URL setting (libpq's `password` and `sslpassword`,
 * and the names services give tokens and keys), compared in lower case; a name containing one of the
 * {@link SECRET_PARAM_PARTS} counts too (`api_key`, `access_token`, `X-Auth-Token`…).
 */
const SECRET_PARAM_PARTS: readonly string[] = ['password', 'passwd', 'pwd', 'pass', 'token', 'key', 'secret', 'auth', 'credential', 'sig'];

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
    const masked = url.search.slice(1).split('&').map((pair) => {
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

/**
 * The effective configuration as text, one row per setting of `SETTINGS` (src/config/config.ts): values of
 * settings whose unit is `secret` are replaced by {@link MASK}; in every value that is a URL (a setting of unit
 * `URL`, or any value of the form `scheme://…`), the userinfo's password and secret query parameters too
 * ({@link maskUrl}).
 */
export function effectiveSettings(config: Config): z.infer<typeof settingsOut> {
  const data = (Object.keys(SETTINGS) as (keyof Config)[]).map((name) => {
    const s = SETTINGS[name];
    const raw: unknown = config[name];
    const secret = s.unit === 'secret';
    let value: string | null;
    if (raw === undefined) value = null;
    else if (secret) value = MASK;
    else if (s.unit === 'URL' || (typeof raw === 'string' && LOOKS_LIKE_URL.test(raw))) value = maskUrl(String(raw));
    else if (Array.isArray(raw)) {
      value = raw.map((v) => (typeof v === 'object' ? JSON.stringify(v) : LOOKS_LIKE_URL.test(String(v)) ? maskUrl(String(v)) : String(v))).join(',');
    } else value = String(raw);
    const parsedDefault = s.schema.safeParse(s.defaultValue);
    const isDefault = parsedDefault.success && JSON.stringify(parsedDefault.data) === JSON.stringify(raw);
    return { name, env: s.env, value, defaultValue: s.defaultValue ?? null, isDefault, unit: s.unit, description: s.description, secret };
  });
  return { data };
}

/**
 * Tidings: `GET /api/v1/settings` (operator only) — the effective configuration, secrets masked (the
 * console's settings page); `GET /api/v1/portal/branding` (any credential, read-only ones included) — the
 * application portal's name, logo URL and accent colour (TIDINGS_PORTAL_BRAND_*).
 */
export function registerSettings(app: Api, deps: Pick<HttpDeps, 'config'>): void {
  app.get('/api/v1/settings', {
    config: { adminOnly: true },
    schema: { tags: ['Settings'], summary: 'Effective configuration, secrets masked (Tidings)', response: { 200: settingsOut, ...commonErrors } },
  }, async () => effectiveSettings(deps.config));

  app.get('/api/v1/portal/branding', {
    schema: { tags: ['Settings'], summary: 'Application portal branding (Tidings)', response: { 200: brandingOut, ...commonErrors } },
  }, async () => ({ name: deps.config.portalBrandName, logoUrl: deps.config.portalBrandLogoUrl ?? null, accentColor: deps.config.portalBrandAccent }));
}
