import type { SendResult } from '../domain/attempt-outcome.ts';
import { ErrorKind } from '../domain/error-kinds.ts';
import type { VersionedReceiverAuth } from '../domain/receiver-auth.ts';
import type { Clock } from '../ports/clock.ts';
import type { ReceiverAuthSource } from '../ports/receiver-auth-store.ts';
import type { OutboundRequest, Sender } from '../ports/sender.ts';
import { LRUCache } from 'lru-cache';

/** Settings of {@link createReceiverAuthLookup}. */
export interface ReceiverAuthLookupOptions {
  /** How long a loaded configuration is used before it is read again, ms (TIDINGS_RECEIVER_AUTH_REFRESH). */
  readonly refreshMs: number;
  /** Most endpoints kept; past it the least recently used goes (TIDINGS_RECEIVER_AUTH_CACHE_MAX). */
  readonly max: number;
  readonly clock: Clock;
}

/**
 * A dispatcher's view of endpoints' receiver authentication (docs/adr/0028-receiver-authentication.md): each
 * endpoint's configuration (or its absence) read once per `refreshMs`, however many attempts ask meanwhile (one
 * read in flight per endpoint), so a change reaches deliveries within `refreshMs` and the hot path reads nothing
 * for most attempts. A failed read is not kept: the next attempt reads again. lru-cache underneath (its `fetch`
 * shares one read in flight; its clock is the injected one).
 */
export function createReceiverAuthLookup(
  source: ReceiverAuthSource,
  o: ReceiverAuthLookupOptions,
): (endpointId: string) => Promise<VersionedReceiverAuth | null> {
  // 0: read for every attempt (lru-cache would read a ttl of 0 as "kept for ever").
  if (o.refreshMs === 0) return (endpointId) => source.load(endpointId);
  // lru-cache keeps objects, not null: each configuration travels in a box.
  const entries = new LRUCache<string, { readonly value: VersionedReceiverAuth | null }>({
    max: o.max,
    // lru-cache reads an entry as stale once strictly more than `ttl` has passed: kept for refreshMs means `ttl`
    // one ms less (the clock counts whole ms). `ttlResolution: 0`: the injected clock is read every time.
    ttl: Math.max(1, o.refreshMs - 1),
    ttlResolution: 0,
    perf: { now: () => o.clock.nowMs() },
    fetchMethod: async (endpointId) => ({ value: await source.load(endpointId) }),
  });
  return async (endpointId) => (await entries.fetch(endpointId))!.value;
}

/**
 * The sender with each request's receiver authentication looked up by its `endpointId`. A configuration that cannot
 * be read or decrypted ends the attempt as `receiver_auth` (nothing sent; the operator's part and `onError` say why).
 */
export function withReceiverAuth(
  sender: Sender,
  lookup: (endpointId: string) => Promise<VersionedReceiverAuth | null>,
  onError: (endpointId: string, error: unknown) => void,
): Sender {
  return {
    async send(request: OutboundRequest, signal?: AbortSignal): Promise<SendResult> {
      if (request.endpointId === undefined || request.receiverAuth !== undefined) return sender.send(request, signal);
      let receiverAuth: VersionedReceiverAuth | null;
      try {
        receiverAuth = await lookup(request.endpointId);
      } catch (error) {
        onError(request.endpointId, error);
        return {
          type: 'error',
          errorKind: ErrorKind.receiverAuth,
          detail: "the endpoint's receiver authentication could not be read",
          durationMs: 0,
          network: { reason: error instanceof Error ? error.message : String(error) },
        };
      }
      return sender.send(receiverAuth === null ? request : { ...request, receiverAuth }, signal);
    },
    close: () => sender.close(),
  };
}
