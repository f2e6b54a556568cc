import type { SendResult } from '../domain/attempt-outcome.ts';
import { ErrorKind } from '../domain/error-kinds.ts';
import type { VersionedReceiverAuth } from '../domain/receiver-auth.ts';
import type { Clock } from '../ports/clock.ts';
import type { ReceiverAuthSource } from '../ports/receiver-auth-store.ts';
import type { OutboundRequest, Sender } from '../ports/sender.ts';

/** Settings of {@link createReceiverAuthLookup}. */
export interface ReceiverAuthLookupOptions {
  /** How long a loaded configuration is used before it is read again, ms (TIDINGS_RECEIVER_AUTH_REFRESH). */
  readonly refreshMs: number;
  /** Most endpoints kept; past it the least recently used goes (TIDINGS_RECEIVER_AUTH_CACHE_MAX). */
  readonly max: number;
  readonly clock: Clock;
}

interface Entry {
  loadedAt: number;
  value: VersionedReceiverAuth | null;
  pending?: Promise<VersionedReceiverAuth | null>;
}

/**
 * A dispatcher's view of endpoints' receiver authentication (docs/adr/0028-receiver-authentication.md): each
 * endpoint's configuration (or its absence) read once per `refreshMs`, however many attempts ask meanwhile (one
 * read in flight per endpoint), so a change reaches deliveries within `refreshMs` and the hot path reads nothing
 * for most attempts. A failed read is not kept: the next attempt reads again.
 */
export function createReceiverAuthLookup(
  source: ReceiverAuthSource,
  o: ReceiverAuthLookupOptions,
): (endpointId: string) => Promise<VersionedReceiverAuth | null> {
  const entries = new Map<string, Entry>();
  return (endpointId) => {
    const now = o.clock.nowMs();
    const entry = entries.get(endpointId);
    if (entry !== undefined) {
      entries.delete(endpointId);
      entries.set(endpointId, entry);
      if (entry.pending !== undefined) return entry.pending;
      if (now - entry.loadedAt < o.refreshMs) return Promise.resolve(entry.value);
    }
    const fresh: Entry = entry ?? { loadedAt: now, value: null };
    const pending = source.load(endpointId).then(
      (value) => {
        fresh.value = value;
        fresh.loadedAt = o.clock.nowMs();
        delete fresh.pending;
        return value;
      },
      (error: unknown) => {
        entries.delete(endpointId);
        throw error;
      },
    );
    fresh.pending = pending;
    entries.set(endpointId, fresh);
    for (const [k, e] of entries) {
      if (entries.size <= o.max) break;
      if (e.pending === undefined) entries.delete(k);
    }
    return pending;
  };
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
