import { normalizeIP } from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';

declare module 'fastify' {
  interface FastifyRequest {
    /** The client address the per-address limits count ({@link clientAddress}); empty until first read. */
    clientAddressKey: string;
  }
}

/**
 * The address a request's per-address limits count (failed authentications, requests in progress, the rate
 * of the routes served without a credential): Fastify's `request.ip` — the socket's address, or with
 * TIDINGS_TRUSTED_PROXIES the nearest X-Forwarded-For address that is not a trusted proxy (proxy-addr) —
 * normalised as @fastify/rate-limit does (an IPv6 address by its /64, an IPv4-mapped one as IPv4), so one
 * host cannot spread over the 2^64 addresses of its subnet. Computed once per request.
 */
export function clientAddress(request: FastifyRequest): string {
  if (request.clientAddressKey === '') request.clientAddressKey = normalizeIP(request.ip ?? 'unknown');
  return request.clientAddressKey;
}

/** Declares the per-request memo of {@link clientAddress}; installed once, before any hook reads it. */
export function installClientAddress(app: FastifyInstance): void {
  app.decorateRequest('clientAddressKey', '');
}
