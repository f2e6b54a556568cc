import { z } from 'zod';
import type { ApiKeyView } from '../../ports/api-key-store.ts';
import type { Api, HttpDeps } from '../deps.ts';
import { principalOf } from '../idempotency.ts';
import { listOut, pageFit } from '../present.ts';
import { commonErrors, idIterator, listQuery, listResponse, refParam, WIRE_LIMITS } from '../schemas/common.ts';

/** Longest key lifetime a caller may ask for, in seconds (10 years). */
const MAX_EXPIRY_SECONDS = 10 * 365 * 24 * 3600;

const apiKeyIn = z
  .strictObject({
    name: z.string().min(1).max(WIRE_LIMITS.nameMaxLength),
    appId: refParam
      .nullish()
      .describe('Application id or uid: the key may act on this application only. Absent = an operator key.'),
    expiry: z
      .number()
      .int()
      .min(1)
      .max(MAX_EXPIRY_SECONDS)
      .nullish()
      .describe('Lifetime in seconds; absent = until revoked'),
    readOnly: z.boolean().optional().describe('A scoped key that may only read (GET)'),
  })
  .meta({ id: 'ApiKeyIn' });

const apiKeyOut = z
  .object({
    id: z.string(),
    name: z.string(),
    role: z.enum(['admin', 'app']),
    appId: z.string().nullable(),
    readOnly: z.boolean(),
    tokenPrefix: z.string().describe('The first characters of the token, to recognise it'),
    createdAt: z.string(),
    expiresAt: z.string().nullable(),
    revokedAt: z.string().nullable(),
  })
  .meta({ id: 'ApiKeyOut' });

const apiKeyCreated = apiKeyOut
  .extend({ token: z.string().describe('The Bearer token: shown in this answer only, stored as a SHA-256 hash') })
  .meta({ id: 'ApiKeyCreatedOut' });

const apiKeyListQuery = listQuery(idIterator('key'), 'ascending').extend({ app_id: refParam.optional() });

/** An API key as listed: never its token or hash. */
export function apiKeyBody(k: ApiKeyView) {
  return {
    id: k.id,
    name: k.name,
    role: k.role,
    appId: k.appId,
    readOnly: k.readOnly,
    tokenPrefix: k.tokenPrefix,
    createdAt: k.createdAt.toISOString(),
    expiresAt: k.expiresAt?.toISOString() ?? null,
    revokedAt: k.revokedAt?.toISOString() ?? null,
  };
}

/**
 * Tidings credentials API (docs/guides/security.md), operator only (a scoped key gets 403 whatever it names):
 * `POST /api/v1/api-key` creates a key (201; the token appears in this answer only: an Idempotency-Key is not
 * used to replay it, since only its hash is kept), `GET /api/v1/api-key` lists keys without secrets,
 * `DELETE /api/v1/api-key/{key_id}` revokes one (204; at once, for every process).
 */
export function registerApiKeyRoutes(app: Api, deps: Pick<HttpDeps, 'apiKeys' | 'config'>): void {
  app.post(
    '/api/v1/api-key',
    {
      config: { adminOnly: true },
      schema: {
        tags: ['API Key'],
        summary: 'Create API key (Tidings)',
        body: apiKeyIn,
        response: { 201: apiKeyCreated, ...commonErrors },
      },
    },
    async (request, reply) => {
      const b = request.body;
      const issued = await deps.apiKeys.create(principalOf(request), {
        name: b.name,
        appRef: b.appId ?? null,
        expiresInMs: b.expiry == null ? null : b.expiry * 1000,
        readOnly: b.readOnly ?? false,
      });
      return reply
        .code(201)
        .header('cache-control', 'no-store')
        .send({ ...apiKeyBody(issued.key), token: issued.token });
    },
  );

  app.get(
    '/api/v1/api-key',
    {
      config: { adminOnly: true },
      schema: {
        tags: ['API Key'],
        summary: 'List API keys (Tidings)',
        querystring: apiKeyListQuery,
        response: { 200: listResponse(apiKeyOut).meta({ id: 'ListResponseApiKeyOut' }), ...commonErrors },
      },
    },
    async (request) => {
      const q = request.query;
      return listOut(
        await deps.apiKeys.list(principalOf(request), {
          limit: q.limit,
          iterator: q.iterator ?? null,
          order: q.order,
          appRef: q.app_id ?? null,
        }),
        apiKeyBody,
        pageFit(deps.config, q.iterator),
      );
    },
  );

  app.delete(
    '/api/v1/api-key/:keyId',
    {
      config: { adminOnly: true },
      schema: {
        tags: ['API Key'],
        summary: 'Revoke API key (Tidings)',
        params: z.object({ keyId: refParam }),
        response: { 204: z.null(), ...commonErrors },
      },
    },
    async (request, reply) => {
      await deps.apiKeys.revoke(principalOf(request), request.params.keyId);
      return reply.code(204).send(null);
    },
  );
}
