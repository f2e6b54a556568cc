import { z } from 'zod';
import { capabilitiesOf, type Principal } from '../../app/credentials.ts';
import { CAPABILITIES } from '../../domain/capabilities.ts';
import type { Api } from '../deps.ts';
import { principalOf } from '../idempotency.ts';
import { commonErrors } from '../schemas/common.ts';

/** What the presented credential may do (ADR 0011). */
const authMeOut = z
  .object({
    kind: z
      .enum(['admin', 'operator_key', 'app_key', 'app_portal'])
      .describe('admin token, operator API key, application key, or app-portal token'),
    appId: z.string().optional().describe('The application a scoped credential acts on'),
    capabilities: z.array(z.enum(CAPABILITIES)).describe('What it may do (the operator holds every capability)'),
    readOnly: z.boolean().describe('ViewBase only'),
    sessionId: z.string().optional().describe('Svix sessionId the portal token was issued with'),
    featureFlags: z.array(z.string()).describe('Svix featureFlags the portal token was issued with'),
    expiresAt: z.string().nullable().describe('When the credential stops working (RFC 3339), null = until revoked'),
  })
  .meta({ id: 'AuthMeOut' });

/** The `GET /api/v1/auth/me` answer for `principal`. */
export function authMeBody(principal: Principal): z.infer<typeof authMeOut> {
  const held = capabilitiesOf(principal);
  const capabilities = CAPABILITIES.filter((c) => held.has(c));
  if (principal.kind === 'admin')
    return {
      kind: principal.operatorKey === true ? 'operator_key' : 'admin',
      capabilities,
      readOnly: false,
      featureFlags: [],
      expiresAt: null,
    };
  return {
    kind: principal.portal === true ? 'app_portal' : 'app_key',
    appId: principal.appId,
    capabilities,
    readOnly: capabilities.every((c) => c === 'ViewBase'),
    ...(principal.sessionId === undefined ? {} : { sessionId: principal.sessionId }),
    featureFlags: [...(principal.featureFlags ?? [])],
    expiresAt: principal.expiresAt?.toISOString() ?? null,
  };
}

/**
 * `GET /api/v1/auth/me` (Tidings): what the presented credential is and may do — its kind, its application,
 * its capabilities, whether it only reads, its portal session and feature flags — so that a console or
 * portal shows only what will work. Any valid credential may ask.
 */
export function registerAuthMe(app: Api): void {
  app.get(
    '/api/v1/auth/me',
    {
      schema: {
        tags: ['Authentication'],
        summary: 'Who am I (Tidings)',
        response: { 200: authMeOut, ...commonErrors },
      },
    },
    async (request, reply) => reply.header('cache-control', 'no-store').send(authMeBody(principalOf(request))),
  );
}
