import { z } from 'zod';
import { durationMs, type SettingTable } from '../parse.ts';

/** The application portal, its branding, and the browser origins allowed to call the API. */
export const PORTAL_SETTINGS = {
  corsOrigins: {
    env: 'TIDINGS_CORS_ORIGINS',
    schema: z.string().transform((text) =>
      text
        .split(',')
        .map((o) => o.trim())
        .filter((o) => o !== ''),
    ),
    defaultValue: '',
    unit: 'origin list',
    description:
      'Browser origins allowed to call the API (comma-separated, or *). Empty: CORS is off and browsers get no ' +
      'CORS headers.',
  },
  portalFrameAncestors: {
    env: 'TIDINGS_PORTAL_FRAME_ANCESTORS',
    schema: z.string().transform((text, ctx) => {
      const parts = text.split(/[\s,]+/).filter((o) => o !== '');
      for (const part of parts)
        if (!/^(https?:\/\/[a-zA-Z0-9.\-\[\]:*]+|'self')$/.test(part))
          ctx.addIssue({ code: 'custom', message: `"${part}" is not an origin (https://app.example.com) or 'self'` });
      return parts;
    }),
    defaultValue: "'self'",
    unit: 'origin list',
    description:
      'Origins whose pages may show the application portal (/app-portal) in an iframe: the CSP frame-ancestors ' +
      'of the portal (space- or comma-separated). The console (/console) may never be framed.',
  },
  portalBrandName: {
    env: 'TIDINGS_PORTAL_BRAND_NAME',
    schema: z.string().min(1).max(100),
    defaultValue: 'Webhooks',
    unit: 'text',
    description: 'Name shown at the top of the application portal.',
  },
  portalBrandLogoUrl: {
    env: 'TIDINGS_PORTAL_BRAND_LOGO_URL',
    schema: z
      .string()
      .url()
      .refine((u) => /^https?:/.test(u), 'must be an http(s) URL')
      .optional(),
    defaultValue: undefined,
    unit: 'URL',
    description:
      "Logo shown at the top of the application portal (its origin is added to the portal's CSP img-src); " +
      'unset = none.',
  },
  portalBrandAccent: {
    env: 'TIDINGS_PORTAL_BRAND_ACCENT',
    schema: z.string().regex(/^#[0-9a-fA-F]{6}$/, 'must be a #rrggbb colour'),
    defaultValue: '#3b5bdb',
    unit: 'colour',
    description: 'Accent colour of the application portal (#rrggbb).',
  },
  appPortalUrl: {
    env: 'TIDINGS_APP_PORTAL_URL',
    schema: z.string().url().optional(),
    defaultValue: undefined,
    unit: 'URL',
    description:
      'Base URL of the application portal that app-portal-access links point at (the token follows in the ' +
      "fragment). Unset: TIDINGS_PUBLIC_URL + /app-portal. Never taken from a request's Host header.",
  },
  publicUrl: {
    env: 'TIDINGS_PUBLIC_URL',
    schema: z
      .string()
      .url()
      .refine((u) => /^https?:$/.test(new URL(u).protocol), 'must be an http(s) URL')
      .optional(),
    defaultValue: undefined,
    unit: 'URL',
    description:
      'Public base URL of this API (e.g. https://hooks.example.com), for the links it hands out. Unset: the ' +
      "address the request arrived on (the socket's, never the Host header).",
  },
  appPortalTokenTtlMs: {
    env: 'TIDINGS_APP_PORTAL_TOKEN_TTL',
    schema: durationMs(1000),
    defaultValue: '7d',
    unit: 'duration',
    description: 'Lifetime of an application-portal token when the request names no expiry.',
  },
} satisfies SettingTable;
