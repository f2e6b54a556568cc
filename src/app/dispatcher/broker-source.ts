import type { BrokerDeadLetter, BrokerMessage, BrokerTransport } from '../../ports/broker.ts';
import type { BrokerOutboxStore, ClaimIdRefusal } from '../../ports/broker-outbox-store.ts';
import type { Clock } from '../../ports/clock.ts';
import type { ClaimedDelivery, ClaimWindow } from '../../ports/delivery-store.ts';
import type { Logger } from '../../ports/logger.ts';
import type { TakeRequest, Taken, WorkSink, WorkSource } from '../../ports/work-source.ts';

/** How a broker message ended on this dispatcher, for the metrics. */
export type BrokerAck =
  /** The attempt's record committed, or was fenced out. */
  | 'recorded'
  /** Given up without a record (lease lost, released at the stop): the outbox publishes the id again. */
  | 'released'
  /** Its id was not due, or its endpoint gated: the outbox publishes it when it is due and its gate lets it. */
  | 'not_due'
  | 'gated'
  /** Another message of the same id was leased here. */
  | 'duplicate';

/** What a broker source reports (metrics). */
export interface BrokerSourceObserver {
  received?(redelivered: boolean): void;
  acknowledged?(how: BrokerAck, count: number): void;
  /** A claim of this message's id failed alone: nacked, it counts toward the broker's delivery limit. */
  nacked?(count: number): void;
  deadLettered?(letter: BrokerDeadLetter): void;
}

/** Options of {@link createBrokerSource}. Durations in ms. */
export interface BrokerSourceOptions {
  readonly transport: Pick<BrokerTransport, 'consume' | 'name'>;
  readonly store: Pick<BrokerOutboxStore, 'claimIds' | 'sweep'>;
  readonly clock: Pick<Clock, 'nowMs'>;
  /** Most messages handed out and not settled (the consumer's prefetch over every shard). */
  readonly maxInFlight: number;
  /** Least time between two sweeps of expired leases lost too often (the claim source's pace). */
  readonly sweepEveryMs: number;
  readonly logger: Logger;
  readonly observer?: BrokerSourceObserver;
}

/** A message waiting to be offered, and whether its claim must run alone (a batch with it failed, or redelivered). */
interface Waiting {
  readonly message: BrokerMessage;
  alone: boolean;
}

/** A delivery a broker message carried counts as suspect from this many deliveries on: its claim runs alone. */
const SUSPECT_DELIVERY_COUNT = 3;

/** One broker source's state, shared by the functions below. */
interface Source {
  readonly options: BrokerSourceOptions;
  readonly observer: BrokerSourceObserver;
  /** Messages waiting to be offered, in arrival order. */
  waiting: Waiting[];
  /** Messages of leased ids, by `id:fencingToken`: acknowledged when the record settled or the lease was given up. */
  readonly leased: Map<string, BrokerMessage[]>;
  connected: boolean;
  lastSweepMs: number;
}

/**
 * A broker transport as a {@link WorkSource} (docs/guides/transports.md): `connect` consumes the broker and wakes the
 * dispatcher as messages arrive; `take` leases the ids of waiting messages with the fenced claim by id
 * (`BrokerOutboxStore.claimIds`, every gate of the claim), within the dispatcher's window; `settled` and `released`
 * acknowledge the message of a leased id. An id that is not due or whose endpoint is gated is acknowledged at once
 * (the outbox publishes it again when it is due and its gate lets it); one that the window has no room for now waits
 * here, within the consumer's bound. A claim that fails for one id alone nacks its message: a poison id reaches the
 * broker's delivery limit and is dead-lettered, counted and logged; its row stays pending.
 */
export function createBrokerSource(options: BrokerSourceOptions): WorkSource {
  const s: Source = {
    options,
    observer: options.observer ?? {},
    waiting: [],
    leased: new Map(),
    connected: false,
    lastSweepMs: Number.NEGATIVE_INFINITY,
  };
  return {
    name: options.transport.name,
    take: (request) => take(s, request),
    connect: (sink) => connect(s, sink),
    settled: (delivery) => endLease(s, delivery, 'recorded'),
    released: (delivery) => endLease(s, delivery, 'released'),
  };
}

function ack(s: Source, messages: readonly BrokerMessage[], how: BrokerAck): void {
  for (const m of messages) m.ack();
  if (messages.length > 0) s.observer.acknowledged?.(how, messages.length);
}

const leaseKey = (d: ClaimedDelivery): string => `${d.deliveryId}:${d.fencingToken}`;

function endLease(s: Source, delivery: ClaimedDelivery, how: BrokerAck): void {
  const key = leaseKey(delivery);
  const messages = s.leased.get(key);
  if (messages === undefined) return;
  s.leased.delete(key);
  ack(s, messages, how);
}

/**
 * Leases ids of waiting messages for the dispatcher's free slots: suspect ids one statement each, so that one whose
 * claim fails is nacked alone; then the rest in one statement. Sweeps expired leases first, at most every
 * `sweepEveryMs`.
 */
async function take(s: Source, request: TakeRequest): Promise<Taken> {
  const { store, clock, logger } = s.options;
  const nowMs = clock.nowMs();
  let deadLettered = 0;
  if (nowMs - s.lastSweepMs >= s.options.sweepEveryMs || nowMs < s.lastSweepMs) {
    deadLettered = await store.sweep(request.maxReclaims, request.now);
    s.lastSweepMs = nowMs;
  }
  const exclude = new Set(request.excludeEndpoints);
  const deliveries: ClaimedDelivery[] = [];
  let reclaimed = 0;
  const claim = async (ids: readonly string[]): Promise<void> => {
    let result;
    try {
      result = await store.claimIds({
        dispatcherId: request.dispatcherId,
        ids,
        excludeEndpoints: request.excludeEndpoints,
        window: request.window,
        leaseMs: request.leaseMs,
        maxReclaims: request.maxReclaims,
        now: request.now,
      });
    } catch (error) {
      claimFailed(s, ids);
      throw error;
    }
    apply(s, ids, result.deliveries, result.refused);
    deliveries.push(...result.deliveries);
    reclaimed += result.reclaimed;
  };
  // A failure after some leases returns those (they are in flight here); with none, it backs the dispatcher off.
  try {
    for (const id of pick(s, request.limit, request.window, exclude, true)) {
      if (deliveries.length >= request.limit) break;
      await claim([id]);
    }
    const rest = pick(s, request.limit - deliveries.length, request.window, exclude, false);
    if (rest.length > 0) await claim(rest);
  } catch (error) {
    if (deliveries.length === 0) throw error;
    logger.warn({ err: error }, 'claim of broker ids failed; the ids leased before it are sent');
  }
  return { deliveries, reclaimed, deadLettered };
}

/** Consumes the broker, waking `sink` per message; the function returned stops and nacks what was not offered. */
function connect(s: Source, sink: WorkSink): () => void {
  const { options } = s;
  s.connected = true;
  const consumer = options.transport.consume({
    maxInFlight: options.maxInFlight,
    onMessage: (message) => onMessage(s, message, () => sink.wake()),
    onDeadLetter: (letter) => onDeadLetter(s, letter),
  });
  return () => {
    s.connected = false;
    consumer.cancel().catch((error: unknown) => options.logger.warn({ err: error }, 'broker consumer not cancelled'));
    // Not offered yet: back to the broker for another dispatcher (the ones leased here end with their flights).
    const left = s.waiting;
    s.waiting = [];
    for (const w of left) w.message.nack();
  };
}

/**
 * Up to `limit` ids of waiting messages (`alone` ones, or the others), taken round-robin over their endpoints in
 * arrival order, each endpoint at most its room in the window (share − held): ids of an endpoint that has no room now
 * (a black hole at its share) never crowd out another endpoint's.
 */
function pick(s: Source, limit: number, window: ClaimWindow, exclude: ReadonlySet<string>, alone: boolean): string[] {
  const byEndpoint = new Map<string, string[]>();
  for (const w of s.waiting) {
    const endpointId = w.message.endpointId;
    if (w.alone !== alone || exclude.has(endpointId)) continue;
    const ids = byEndpoint.get(endpointId) ?? [];
    if (ids.length < window.share - (window.held.get(endpointId) ?? 0) && !ids.includes(w.message.deliveryId)) {
      ids.push(w.message.deliveryId);
    }
    byEndpoint.set(endpointId, ids);
  }
  const picked: string[] = [];
  for (let round = 0; picked.length < limit; round += 1) {
    let any = false;
    for (const ids of byEndpoint.values()) {
      const id = ids[round];
      if (id === undefined) continue;
      any = true;
      picked.push(id);
      if (picked.length >= limit) break;
    }
    if (!any) break;
  }
  return picked;
}

/** Applies the claim's verdicts to the waiting messages of `ids`. */
function apply(
  s: Source,
  ids: readonly string[],
  deliveries: readonly ClaimedDelivery[],
  refused: ReadonlyMap<string, ClaimIdRefusal>,
): void {
  const byId = new Map(deliveries.map((d) => [d.deliveryId, d]));
  const offered = new Set(ids);
  const keep: Waiting[] = [];
  const done: Record<'not_due' | 'gated' | 'duplicate', BrokerMessage[]> = { not_due: [], gated: [], duplicate: [] };
  for (const w of s.waiting) {
    const id = w.message.deliveryId;
    const delivery = byId.get(id);
    if (!offered.has(id)) keep.push(w);
    else if (delivery !== undefined) {
      const key = leaseKey(delivery);
      const first = !s.leased.has(key);
      if (first) s.leased.set(key, [w.message]);
      else done.duplicate.push(w.message);
    } else {
      const why = refused.get(id) ?? 'not_due';
      if (why === 'not_due' || why === 'gated') done[why].push(w.message);
      else keep.push(w); // window or busy: offered again when room frees
    }
  }
  s.waiting = keep;
  ack(s, done.not_due, 'not_due');
  ack(s, done.gated, 'gated');
  ack(s, done.duplicate, 'duplicate');
}

/** A claim of `ids` failed: alone, its message is nacked; in a batch, each is claimed alone from now on. */
function claimFailed(s: Source, ids: readonly string[]): void {
  const offered = new Set(ids);
  if (ids.length > 1) {
    for (const w of s.waiting) if (offered.has(w.message.deliveryId)) w.alone = true;
    return;
  }
  const nacked = s.waiting.filter((w) => offered.has(w.message.deliveryId));
  s.waiting = s.waiting.filter((w) => !offered.has(w.message.deliveryId));
  for (const w of nacked) w.message.nack();
  if (nacked.length > 0) s.observer.nacked?.(nacked.length);
}

function onMessage(s: Source, message: BrokerMessage, wake: () => void): void {
  s.observer.received?.(message.redelivered);
  if (!s.connected) {
    message.nack();
    return;
  }
  const alone = (message.deliveryCount ?? 1) >= SUSPECT_DELIVERY_COUNT;
  s.waiting.push({ message, alone });
  wake();
}

function onDeadLetter(s: Source, letter: BrokerDeadLetter): void {
  s.observer.deadLettered?.(letter);
  s.options.logger.warn(
    { deliveryId: letter.deliveryId, endpointId: letter.endpointId, reason: letter.reason },
    'broker dead-lettered a delivery id: its claim kept failing; the delivery stays pending and the sweep ' +
      'publishes it again',
  );
}
