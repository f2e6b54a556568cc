import { z } from 'zod';
import type { ReceiverAuth } from '../../domain/receiver-auth.ts';
import type { ReceiverAuthPatch } from '../../domain/receiver-auth-patch.ts';
import type { StoredReceiverAuth } from '../../ports/receiver-auth-store.ts';
import type { Api, HttpDeps } from '../deps.ts';
import { principalOf } from '../idempotency.ts';
import { commonErrors, refParam } from '../schemas/common.ts';
import { receiverAuthIn, receiverAuthOut, receiverAuthPatchIn } from '../schemas/receiver-auth.ts';

const params = z.object({ appId: refParam, endpointId: refParam });
type Body = z.output<typeof receiverAuthIn>;
type Out = z.infer<typeof receiverAuthOut>;

function authOf(body: Body): ReceiverAuth {
  const { basic, oauth2, mtls } = body;
  return {
    ...(basic == null ? {} : { basic }),
    ...(oauth2 == null
      ? {}
      : { oauth2: { ...oauth2, scope: oauth2.scope ?? null, audience: oauth2.audience ?? null } }),
    ...(mtls == null
      ? {}
      : { mtls: { certificate: mtls.certificate ?? null, key: mtls.key ?? null, ca: mtls.ca ?? null } }),
  };
}

/** A PATCH body as the use case takes it: absent stays absent (kept), null stays null (removed). */
function patchOf(body: z.output<typeof receiverAuthPatchIn>): ReceiverAuthPatch {
  const drop = <T extends object>(o: T): T =>
    Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
  const part = <T extends object>(v: T | null | undefined) => (v == null ? v : drop(v));
  return drop({ basic: part(body.basic), oauth2: part(body.oauth2), mtls: part(body.mtls) }) as ReceiverAuthPatch;
}

function present(stored: StoredReceiverAuth | null): Out {
  if (stored === null) return { basic: null, oauth2: null, mtls: null, version: null };
  const s = stored.summary;
  return {
    basic: s.basic,
    oauth2: s.oauth2,
    mtls: s.mtls === null ? null : { ...s.mtls, ca: s.mtls.ca === null ? null : [...s.mtls.ca] },
    version: stored.version,
  };
}

const DESCRIPTION =
  'Tidings only (Svix has no receiver authentication). How Tidings authenticates to the receiver: HTTP basic ' +
  'credentials or an OAuth2 client-credentials token (at most one: both set Authorization), and a TLS client ' +
  'certificate. Secrets are stored encrypted and never shown back: GET masks them. PUT replaces the whole; PATCH ' +
  'changes the parts it names and keeps the rest, a secret left out of a part included, null removing a part. ' +
  'mtls needs an https endpoint URL. A change reaches deliveries ' +
  'within TIDINGS_RECEIVER_AUTH_REFRESH. A bad field is 422 naming it.';

/** Receiver authentication: `GET|PUT|PATCH|DELETE /api/v1/app/{app}/endpoint/{ep}/auth` (docs/reference/api.md). */
export function registerEndpointAuth(app: Api, deps: Pick<HttpDeps, 'receiverAuths'>): void {
  const auths = deps.receiverAuths;
  const path = '/api/v1/app/:appId/endpoint/:endpointId/auth';
  const common = { tags: ['Endpoint'], description: DESCRIPTION, params };
  app.get(
    path,
    {
      schema: {
        ...common,
        summary: 'Endpoint receiver auth (Tidings)',
        response: { 200: receiverAuthOut, ...commonErrors },
      },
    },
    async (request) => present(await auths.get(principalOf(request), request.params.appId, request.params.endpointId)),
  );
  app.put(
    path,
    {
      schema: {
        ...common,
        summary: 'Set endpoint receiver auth (Tidings)',
        body: receiverAuthIn,
        response: { 200: receiverAuthOut, ...commonErrors },
      },
    },
    async (request) => {
      const { appId, endpointId } = request.params;
      return present(await auths.set(principalOf(request), appId, endpointId, authOf(request.body)));
    },
  );
  app.patch(
    path,
    {
      schema: {
        ...common,
        summary: 'Change parts of endpoint receiver auth (Tidings)',
        body: receiverAuthPatchIn,
        response: { 200: receiverAuthOut, ...commonErrors },
      },
    },
    async (request) => {
      const { appId, endpointId } = request.params;
      return present(await auths.patch(principalOf(request), appId, endpointId, patchOf(request.body)));
    },
  );
  app.delete(
    path,
    {
      schema: {
        ...common,
        summary: 'Remove endpoint receiver auth (Tidings)',
        response: { 204: z.null().describe('Removed'), ...commonErrors },
      },
    },
    async (request, reply) => {
      await auths.clear(principalOf(request), request.params.appId, request.params.endpointId);
      return reply.code(204).send(null);
    },
  );
}
