import { z } from 'zod';
import type { EndpointHealth } from '../../ports/endpoint-health-store.ts';
import type { Api, HttpDeps } from '../deps.ts';
import { principalOf } from '../idempotency.ts';
import { commonErrors, errorBody, refParam } from '../schemas/common.ts';

const params = z.object({ appId: refParam, endpointId: refParam });
const iso = (d: Date | null): string | null => (d === null || !Number.isFinite(d.valueOf()) ? null : d.toISOString());

/** Limits body: every field optional; null = unlimited. Requests per second and burst are whole numbers. */
const limitsIn = z.strictObject({
  maxInFlight: z.number().int().min(1).max(100_000).nullable().optional(),
  rateLimit: z.number().int().min(1).max(100_000).nullable().optional(),
  rateBurst: z.number().int().min(1).max(1_000_000).nullable().optional(),
});

const windowOut = z.object({
  windowS: z.number(),
  attempts: z.number(),
  succeeded: z.number(),
  failed: z.number(),
  successRatio: z.number().nullable(),
  p50LatencyMs: z.number().nullable(),
  p99LatencyMs: z.number().nullable(),
  redirects: z.number(),
});
const healthOut = z.object({
  status: z.enum(['active', 'paused', 'disabled']),
  statusReason: z.string().nullable(),
  statusChangedAt: z.string().nullable(),
  breaker: z.object({
    state: z.enum(['closed', 'open', 'half_open']),
    consecutiveFailures: z.number(),
    openUntil: z.string().nullable(),
    openedInARow: z.number(),
    changedAt: z.string().nullable(),
  }),
  failingSince: z.string().nullable(),
  lastSuccessAt: z.string().nullable(),
  throttledUntil: z.string().nullable(),
  limits: z.object({
    maxInFlight: z.number().nullable(),
    rateLimit: z.number().nullable(),
    rateBurst: z.number().nullable(),
  }),
  inFlight: z.number(),
  currentRatePerS: z.number(),
  deliveries: z.record(z.string(), z.number()),
  windows: z.array(windowOut),
  lastRedirect: z.object({ at: z.string(), statusCode: z.number(), location: z.string().nullable() }).nullable(),
  history: z.array(z.object({ kind: z.string(), reason: z.string().nullable(), at: z.string() })),
});

function present(h: EndpointHealth): z.infer<typeof healthOut> {
  return {
    status: h.status,
    statusReason: h.statusReason,
    statusChangedAt: iso(h.statusChangedAt),
    breaker: { ...h.breaker, openUntil: iso(h.breaker.openUntil), changedAt: iso(h.breaker.changedAt) },
    failingSince: iso(h.failingSince),
    lastSuccessAt: iso(h.lastSuccessAt),
    throttledUntil: iso(h.throttledUntil),
    limits: { maxInFlight: h.limits.maxInFlight, rateLimit: h.limits.rateLimitPerS, rateBurst: h.limits.rateBurst },
    inFlight: h.inFlight,
    currentRatePerS: h.currentRatePerS,
    deliveries: { ...h.deliveries },
    windows: [...h.windows],
    lastRedirect: h.lastRedirect === null ? null : { ...h.lastRedirect, at: h.lastRedirect.at.toISOString() },
    history: h.history.map((e) => ({ kind: e.kind, reason: e.reason, at: e.at.toISOString() })),
  };
}

/**
 * Tidings endpoint health and flow control (docs/adr/0004-endpoint-flow-control.md):
 * `GET …/endpoint/{ep}/health` (breaker, counters, in-flight, rate, success ratio and p50/p99 latency over
 * 5 min / 1 h / 24 h, deliveries by state, health history), `PATCH …/endpoint/{ep}/limits` (in-flight cap,
 * rate limit and burst, enforced across all dispatchers), `POST …/endpoint/{ep}/pause` and `…/resume`
 * (deliveries held pending without attempts, nothing skipped), `POST …/endpoint/{ep}/breaker/probe` (probe
 * now) and `…/breaker/close` (close the breaker), both answering the health read model. Pause and resume
 * answer 204.
 */
export function registerEndpointHealth(app: Api, deps: Pick<HttpDeps, 'endpointHealth'>): void {
  app.get(
    '/api/v1/app/:appId/endpoint/:endpointId/health',
    {
      schema: {
        tags: ['Endpoint'],
        summary: 'Endpoint health (Tidings)',
        params,
        response: { 200: healthOut, ...commonErrors },
      },
    },
    async (request) =>
      present(await deps.endpointHealth.health(principalOf(request), request.params.appId, request.params.endpointId)),
  );

  app.patch(
    '/api/v1/app/:appId/endpoint/:endpointId/limits',
    {
      schema: {
        tags: ['Endpoint'],
        summary: 'Set endpoint flow-control limits (Tidings)',
        params,
        body: limitsIn,
        response: { 200: healthOut, ...commonErrors },
      },
    },
    async (request) => {
      const b = request.body;
      const current = await deps.endpointHealth.health(
        principalOf(request),
        request.params.appId,
        request.params.endpointId,
      );
      const limits = {
        maxInFlight: b.maxInFlight === undefined ? current.limits.maxInFlight : b.maxInFlight,
        rateLimitPerS: b.rateLimit === undefined ? current.limits.rateLimitPerS : b.rateLimit,
        rateBurst: b.rateBurst === undefined ? current.limits.rateBurst : b.rateBurst,
      };
      return present(
        await deps.endpointHealth.setLimits(
          principalOf(request),
          request.params.appId,
          request.params.endpointId,
          limits,
        ),
      );
    },
  );

  app.post(
    '/api/v1/app/:appId/endpoint/:endpointId/breaker/probe',
    {
      schema: {
        tags: ['Endpoint'],
        summary: "Probe now: end the breaker's cool-down (Tidings)",
        description:
          "Ends an open breaker's cool-down now, so that exactly one delivery goes next as its probe: success closes " +
          'the breaker, failure opens it for a new (longer) cool-down. A half-open breaker already has its ' +
          'probe in flight and is ' +
          'left as it is. Appends `breaker_probe_requested` to the health history. 409 when the breaker is closed.',
        params,
        response: { 200: healthOut, 409: errorBody, ...commonErrors },
      },
    },
    async (request) =>
      present(
        await deps.endpointHealth.probeBreaker(principalOf(request), request.params.appId, request.params.endpointId),
      ),
  );

  app.post(
    '/api/v1/app/:appId/endpoint/:endpointId/breaker/close',
    {
      schema: {
        tags: ['Endpoint'],
        summary: 'Close the breaker (Tidings)',
        description:
          "Closes the endpoint's circuit breaker: its held deliveries are claimed as usual again, and the failure " +
          'streak and cool-down growth start from zero. Appends `breaker_closed` to the health history, its ' +
          'reason naming who ' +
          'closed it ("closed by the operator", "… a portal token of the application", "… an API key of the ' +
          'application"); ' +
          'a closed breaker is left as it is.',
        params,
        response: { 200: healthOut, ...commonErrors },
      },
    },
    async (request) =>
      present(
        await deps.endpointHealth.closeBreaker(principalOf(request), request.params.appId, request.params.endpointId),
      ),
  );

  for (const action of ['pause', 'resume'] as const) {
    app.post(
      `/api/v1/app/:appId/endpoint/:endpointId/${action}`,
      {
        schema: {
          tags: ['Endpoint'],
          summary: `${action === 'pause' ? 'Pause' : 'Resume'} an endpoint (Tidings)`,
          params,
          response: { 204: z.null(), 409: errorBody, ...commonErrors },
        },
      },
      async (request, reply) => {
        await deps.endpointHealth[action](principalOf(request), request.params.appId, request.params.endpointId);
        return reply.code(204).send(null);
      },
    );
  }
}
