import { z } from 'zod';
import { SETTINGS, type Config } from '../../config/config.ts';
import type { Api, HttpDeps } from '../deps.ts';
import { commonErrors } from '../schemas/common.ts';

/** What a secret setting shows instead of its value. */
export const MASK = '••••••••';

const settingOut = z.object({
  name: z.string().describe('Name in the configuration (camelCase)'),
  env: z.string().describe('Environment variable'),
  value: z.string().nullable().describe('Effective value as text (secrets masked, URL passwords masked); null = unset'),
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

/** A URL with its password replaced by {@link MASK}. */
function maskUrl(text: string): string {
  try {
    const url = new URL(text);
    if (url.password !== '') url.password = MASK;
    return url.toString();
  } catch {
    return MASK;
  }
}

/**
 * The effective configuration as text, one row per setting of `SETTINGS` (src/config/config.ts): values of
 * settings whose unit is `secret` are replaced by {@link MASK}, and passwords inside URLs too.
 */
export function effectiveSettings(config: Config): z.infer<typeof settingsOut> {
  const data = (Object.keys(SETTINGS) as (keyof Config)[]).map((name) => {
    const s = SETTINGS[name];
    const raw: unknown = config[name];
    const secret = s.unit === 'secret';
    let value: string | null;
    if (raw === undefined) value = null;
    else if (secret) value = MASK;
    else if (s.unit === 'URL') value = maskUrl(String(raw));
    else if (Array.isArray(raw)) value = raw.map((v) => (typeof v === 'object' ? JSON.stringify(v) : String(v))).join(',');
    else value = String(raw);
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
