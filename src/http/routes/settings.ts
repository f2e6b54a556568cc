import { z } from 'zod';
import { effectiveSettings } from '../../config/effective-settings.ts';
import type { Api, HttpDeps } from '../deps.ts';
import { commonErrors } from '../schemas/common.ts';

const settingOut = z
  .object({
    name: z.string().describe('Name in the configuration (camelCase)'),
    env: z.string().describe('Environment variable'),
    value: z
      .string()
      .nullable()
      .describe(
        'Effective value as text (secrets masked; in URLs the password and secret query parameters such as ' +
          'password, sslpassword, token, key masked); null = unset',
      ),
    defaultValue: z
      .string()
      .nullable()
      .describe('The default as written in the configuration reference (e.g. `5s`); null = unset'),
    isDefault: z
      .boolean()
      .describe('The effective value equals the default once both are parsed (so `5000` ms and `5s` agree)'),
    unit: z.string(),
    description: z.string(),
    secret: z.boolean(),
  })
  .meta({ id: 'SettingOut' });

const settingsOut = z.object({ data: z.array(settingOut) }).meta({ id: 'SettingsOut' });

const brandingOut = z
  .object({
    name: z.string(),
    logoUrl: z.string().nullable(),
    accentColor: z.string().describe('#rrggbb'),
  })
  .meta({ id: 'PortalBrandingOut' });

/**
 * Tidings: `GET /api/v1/settings` (operator only) — the effective configuration, secrets masked (the
 * console's settings page; the masking rule is src/config/effective-settings.ts, shared with `tidings config show`);
 * `GET /api/v1/portal/branding` (any credential, read-only ones included) — the
 * application portal's name, logo URL and accent colour (TIDINGS_PORTAL_BRAND_*).
 */
export function registerSettings(app: Api, deps: Pick<HttpDeps, 'config'>): void {
  app.get(
    '/api/v1/settings',
    {
      config: { adminOnly: true },
      schema: {
        tags: ['Settings'],
        summary: 'Effective configuration, secrets masked (Tidings)',
        response: { 200: settingsOut, ...commonErrors },
      },
    },
    async () => effectiveSettings(deps.config),
  );

  app.get(
    '/api/v1/portal/branding',
    {
      schema: {
        tags: ['Settings'],
        summary: 'Application portal branding (Tidings)',
        response: { 200: brandingOut, ...commonErrors },
      },
    },
    async () => ({
      name: deps.config.portalBrandName,
      logoUrl: deps.config.portalBrandLogoUrl ?? null,
      accentColor: deps.config.portalBrandAccent,
    }),
  );
}
