import swagger from '@fastify/swagger';
import { jsonSchemaTransform, jsonSchemaTransformObject } from 'fastify-type-provider-zod';
import type { Api } from '../deps.ts';

/** Where the OpenAPI document is served (no authentication: it describes the API, not its data). */
export const OPENAPI_PATH = '/api/v1/openapi.json';

/**
 * Registers @fastify/swagger (docs/design.md#the-http-api: every route is described by a schema that also produces the
 * OpenAPI document) and serves the document at {@link OPENAPI_PATH}. Must be registered before the routes.
 * The document (about 170 KB, 20 ms to build) is built once, on the first request after the routes are
 * ready, and every answer sends that one buffer: a caller without a credential cannot make the process
 * build or copy it again (ADR 0019).
 */
export async function installOpenApi(app: Api, version: string): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Tidings API',
        version,
        description: 'Webhook delivery in the shapes of the Svix API; Tidings additions are marked as such.',
      },
      components: { securitySchemes: { HTTPBearer: { type: 'http', scheme: 'bearer' } } },
      security: [{ HTTPBearer: [] }],
    },
    transform: jsonSchemaTransform,
    transformObject: jsonSchemaTransformObject,
  });
  let document: Buffer | null = null;
  app.get(OPENAPI_PATH, { config: { public: true }, schema: { hide: true } }, async (_request, reply) => {
    document ??= Buffer.from(JSON.stringify(app.swagger()), 'utf8');
    return reply.type('application/json; charset=utf-8').send(document);
  });
}
