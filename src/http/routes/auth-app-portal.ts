import type { FastifyRequest } from 'fastify';
import { issuePortalAccess } from '../../app/portal-access.ts';
import { z } from 'zod';
import { SVIX_CAPABILITIES } from '../../domain/capabilities.ts';
import type { Api, HttpDeps } from '../deps.ts';
import { principalOf } from '../idempotency.ts';
import { applicationIn } from '../schemas/application.ts';
import { commonErrors, refParam, WIRE_LIMITS } from '../schemas/common.ts';
import { applicationInput } from './application-create.ts';

/** Longest application-portal token lifetime a caller may ask for, in seconds (one year). */
const MAX_PORTAL_EXPIRY_SECONDS = 365 * 24 * 3600;

/** Svix `FeatureFlag`: letters, digits, `-`, `_`, `.`. */
const featureFlag = z
  .string()
  .min(1)
  .max(WIRE_LIMITS.nameMaxLength)
  .regex(/^[a-zA-Z0-9\-_.]+$/);

/**
 * Svix `AppPortalAccessIn` (ADR 0011): `capabilities` (Svix's set; an unknown one is 422, `ViewBase` is
 * required, absent = every capability), `readOnly` (= `ViewBase` only), `sessionId` (for expire-all by
 * session) and `featureFlags` (returned by `GET /api/v1/auth/me`) are stored with the token.
 */
const appPortalAccessIn = z
  .object({
    application: applicationIn.nullish().describe('Created (with this uid) when the application does not exist'),
    expiry: z
      .number()
      .int()
      .min(1)
      .max(MAX_PORTAL_EXPIRY_SECONDS)
      .nullish()
      .describe('Token lifetime in seconds; default TIDINGS_APP_PORTAL_TOKEN_TTL'),
    readOnly: z.boolean().nullish().describe('ViewBase only (Svix: deprecated in favour of capabilities)'),
    featureFlags: z
      .array(featureFlag)
      .max(WIRE_LIMITS.eventTypesMax)
      .nullish()
      .describe('Stored with the token; GET /api/v1/auth/me returns them'),
    sessionId: z
      .string()
      .min(1)
      .max(WIRE_LIMITS.nameMaxLength)
      .nullish()
      .describe("Stored with the token; expire-all with sessionIds ends only these sessions' tokens"),
    capabilities: z
      .array(z.string().max(WIRE_LIMITS.nameMaxLength))
      .nullish()
      .describe(`One or more of ${SVIX_CAPABILITIES.join(', ')} (ViewBase required); absent = all`),
  })
  .meta({ id: 'AppPortalAccessIn' });

const appPortalAccessOut = z.object({ url: z.string(), token: z.string() }).meta({ id: 'AppPortalAccessOut' });

/** Svix `ApplicationTokenExpireIn`: `expiry` = seconds until the tokens expire (absent = now). */
const tokenExpireIn = z
  .object({
    expiry: z.number().int().min(0).max(MAX_PORTAL_EXPIRY_SECONDS).nullish(),
    sessionIds: z
      .array(z.string().min(1).max(WIRE_LIMITS.nameMaxLength))
      .max(WIRE_LIMITS.eventTypesMax)
      .nullish()
      .describe('Only the portal tokens issued with one of these session ids; absent or empty = every token'),
  })
  .meta({ id: 'ApplicationTokenExpireIn' });

/**
 * Base URL of the portal links (never from the request's Host header, which the caller chooses):
 * TIDINGS_APP_PORTAL_URL; else TIDINGS_PUBLIC_URL + `/app-portal`; else the address and port the request's
 * connection arrived on (the socket's own, e.g. `http://127.0.0.1:8071/app-portal`).
 */
export function portalBase(
  config: Pick<HttpDeps['config'], 'appPortalUrl' | 'publicUrl' | 'host' | 'port'>,
  request: FastifyRequest,
): string {
  if (config.appPortalUrl !== undefined) return config.appPortalUrl;
  if (config.publicUrl !== undefined) return `${config.publicUrl.replace(/\/+$/, '')}/app-portal`;
  const address = request.socket.localAddress ?? config.host;
  const port = request.socket.localPort ?? config.port;
  const host = address.startsWith('::ffff:') ? address.slice(7) : address;
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}/app-portal`;
}

/**
 * Svix authentication routes (docs/guides/security.md):
 * - `POST /api/v1/auth/app-portal-access/{app_id}` (operator only): a token scoped to one application
 *   (`{url, token}`; the token also follows `#key=` in the URL), expiring after `expiry` seconds. It is shown
 *   once (only its hash is kept), so an Idempotency-Key does not replay it: each call issues a new token.
 *   The link's base comes from configuration ({@link portalBase}).
 * - `POST /api/v1/auth/logout`: an application token revokes itself.
 * - `POST /api/v1/auth/app/{app_id}/expire-all` (operator only): every token of the application expires, or
 *   with `sessionIds` only the portal tokens of those sessions.
 */
export function registerAuthRoutes(
  app: Api,
  deps: Pick<HttpDeps, 'apiKeys' | 'applications' | 'unitOfWork' | 'config'>,
): void {
  app.post(
    '/api/v1/auth/app-portal-access/:appId',
    {
      config: { adminOnly: true },
      schema: {
        tags: ['Authentication'],
        summary: 'Get consumer app portal access',
        params: z.object({ appId: refParam }),
        body: appPortalAccessIn,
        response: { 200: appPortalAccessOut, ...commonErrors },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const b = request.body;
      const issued = await issuePortalAccess(
        deps,
        principal,
        request.params.appId,
        b.application == null ? null : applicationInput(b.application),
        {
          name: 'app portal',
          readOnly: b.readOnly ?? false,
          expiresInMs: b.expiry == null ? deps.config.appPortalTokenTtlMs : b.expiry * 1000,
          capabilities: b.capabilities ?? null,
          sessionId: b.sessionId ?? null,
          featureFlags: b.featureFlags ?? null,
        },
      );
      return reply
        .header('cache-control', 'no-store')
        .send({ url: `${portalBase(deps.config, request)}#key=${issued.token}`, token: issued.token });
    },
  );

  app.post(
    '/api/v1/auth/logout',
    {
      schema: {
        tags: ['Authentication'],
        summary: 'Logout an app token',
        response: { 204: z.null(), ...commonErrors },
      },
    },
    async (request, reply) => {
      const token = /^Bearer[ \t]+(\S+)/i.exec(request.headers.authorization ?? '')?.[1] ?? '';
      await deps.apiKeys.logout(principalOf(request), token);
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/api/v1/auth/app/:appId/expire-all',
    {
      config: { adminOnly: true },
      schema: {
        tags: ['Authentication'],
        summary: 'Expire all tokens of an application',
        params: z.object({ appId: refParam }),
        body: tokenExpireIn.nullish(),
        response: { 204: z.null(), ...commonErrors },
      },
    },
    async (request, reply) => {
      await deps.apiKeys.expireAll(
        principalOf(request),
        request.params.appId,
        (request.body?.expiry ?? 0) * 1000,
        request.body?.sessionIds ?? null,
      );
      return reply.code(204).send(null);
    },
  );
}
