import { hostname } from 'node:os';
import type { Db, SmallStatements } from '../adapters/postgres/db.ts';
import { isDatabaseUnavailable } from '../adapters/postgres/sqlstate.ts';
import { createPgDeliveryStore, outcomePolicyOf } from '../adapters/postgres/delivery/delivery-store.ts';
import { withTraceContexts } from '../adapters/postgres/message/trace-context.ts';
import { createPgMessageStore } from '../adapters/postgres/message/message-store.ts';
import { createPgOperationalEvents } from '../adapters/postgres/delivery/operational-events.ts';
import { createHttpSender } from '../adapters/http-sender/http-sender.ts';
import type { LookupFunction } from '../adapters/http-sender/guarded-connect.ts';
import { createPgReceiverAuthStore } from '../adapters/postgres/endpoint/endpoint-auth-store.ts';
import { createReceiverAuthLookup, withReceiverAuth } from '../app/receiver-auth-lookup.ts';
import { createClaimSource } from '../app/dispatcher/claim-source.ts';
import { createDispatcher, type Dispatcher } from '../app/dispatcher/dispatcher.ts';
import { createHandoffSource } from '../app/dispatcher/handoff-source.ts';
import type { Config } from '../config/config.ts';
import type { Cipher } from '../ports/cipher.ts';
import type { Handoff } from '../ports/handoff.ts';
import type { Clock, Random } from '../ports/clock.ts';
import type { Logger } from '../ports/logger.ts';
import type { Sender } from '../ports/sender.ts';
import { NOOP_TRACER, type Tracer } from '../ports/tracer.ts';
import type { Metrics } from '../observability/metrics.ts';
import { deliveryStoreMetrics } from './delivery-metrics.ts';
import type { FaultPoints } from './fault-points.ts';
import type { Wakeups } from '../adapters/postgres/wakeups/wakeups.ts';
import { createPgBrokerOutboxStore } from '../adapters/postgres/delivery/broker-outbox-store.ts';
import { createBrokerSource } from '../app/dispatcher/broker-source.ts';
import { systemTimers } from '../app/dispatcher/loop-timers.ts';
import { createOutboxPublisher, type OutboxPublisher } from '../app/dispatcher/outbox-publisher.ts';
import type { WorkSource } from '../ports/work-source.ts';
import type { BrokerWiring } from './broker-transport.ts';

/** The `user-agent` of every webhook request. */
export const USER_AGENT = 'Tidings-Webhooks/0.1 (+https://github.com/tidings)';

/** Everything the dispatcher role needs from the composition root. */
export interface DispatcherRoleDeps {
  readonly config: Config;
  readonly db: Db;
  /**
   * Where record transactions of few outcomes run, planned once (docs/adr/0016-hot-path-cost.md, decision 24); absent =
   * `db`.
   */
  readonly small?: SmallStatements;
  readonly cipher: Cipher;
  readonly clock: Clock;
  readonly random: Random;
  readonly logger: Logger;
  /** Logger of the attempt line only, which may write without redaction (`withoutRedaction`); default `logger`. */
  readonly attemptLogger?: Logger;
  /**
   * Logger of the failed store call line: the process logger, whose transient-fault hook writes a database outage
   * once per change of state (src/observability/transient-faults.ts); default `logger`.
   */
  readonly storeFaultLogger?: Logger;
  readonly metrics: Metrics;
  readonly wakeups: Wakeups;
  /** Test seam: the resolver of the SSRF-guarded connect. */
  readonly lookup?: LookupFunction;
  /** Test seam: armed fault points (TIDINGS_TEST_FAULT_POINTS), wrapped around the store and the sender. */
  readonly faultPoints?: FaultPoints | null;
  /** Delivery and attempt spans; default the no-op tracer (tracing off). */
  readonly tracer?: Tracer;
  /** Whether the publishes of this process hand the dispatcher their deliveries leased (ADR 0018); default false. */
  readonly handoff?: boolean;
  /**
   * A broker transport (TIDINGS_TRANSPORT other than postgres): the dispatcher's one source is the broker, and the role
   * has an outbox publisher (docs/guides/transports.md); no claim source, no hand-off.
   */
  readonly broker?: BrokerWiring | null;
}

/** A running dispatcher with its sender. */
export interface DispatcherRole {
  readonly dispatcher: Dispatcher;
  readonly sender: Sender;
  readonly dispatcherId: string;
  /**
   * The publish side of the hand-off source (given with `handoff: true`): what the message store offers to and adopts
   * from.
   */
  readonly handoff: Handoff | undefined;
  /**
   * The outbox publisher of a broker transport (started and stopped with the dispatcher by the caller), else undefined.
   */
  readonly outbox: OutboxPublisher | undefined;
}

/**
 * Wires store, work sources (the claim, woken by the wake-ups; the hand-off), sender and metrics into a dispatcher (not
 * yet started).
 */
export function createDispatcherRole(deps: DispatcherRoleDeps): DispatcherRole {
  const { config, metrics } = deps;
  const dispatcherId =
    config.dispatcherId ?? `${hostname()}-${process.pid}-${Math.floor(deps.random.next() * 36 ** 4).toString(36)}`;
  const httpSender = createHttpSender({
    connectTimeoutMs: config.connectTimeoutMs,
    headersTimeoutMs: config.headersTimeoutMs,
    bodyTimeoutMs: config.bodyTimeoutMs,
    deadlineMs: config.attemptDeadlineMs,
    maxResponseBytes: config.maxResponseBytes,
    responsePrefixBytes: config.responsePrefixBytes,
    maxSocketsPerOrigin: config.maxSocketsPerOrigin,
    egressAllowlist: config.egressAllowlist,
    userAgent: USER_AGENT,
    ...(deps.lookup === undefined ? {} : { lookup: deps.lookup }),
    receiverAuth: {
      cacheMax: config.receiverAuthCacheMax,
      tokenEarlyRefreshMs: config.oauth2TokenEarlyRefreshMs,
      tokenDefaultLifetimeMs: config.oauth2TokenDefaultLifetimeMs,
    },
    nowMs: () => deps.clock.nowMs(),
  });
  const tracer = deps.tracer ?? NOOP_TRACER;
  const logger = deps.logger.child({ role: 'dispatcher', dispatcherId });
  const storeFaultLogger = (deps.storeFaultLogger ?? deps.logger).child({ role: 'dispatcher', dispatcherId });
  // Each request's receiver authentication, read per endpoint at most once per TIDINGS_RECEIVER_AUTH_REFRESH.
  const authLookup = createReceiverAuthLookup(createPgReceiverAuthStore(deps.db, deps.cipher), {
    refreshMs: config.receiverAuthRefreshMs,
    max: config.receiverAuthCacheMax,
    clock: deps.clock,
  });
  const authSender = withReceiverAuth(httpSender, authLookup, (endpointId, error) =>
    logger.warn({ err: error, endpointId }, 'receiver authentication not read: the attempt fails as receiver_auth'),
  );
  const faults = deps.faultPoints ?? null;
  const sender = faults === null ? authSender : faults.sender(authSender);
  // An operational event that cannot be stored never fails the record it reports on: it is logged and counted.
  const onDropped = (error: unknown, events: readonly { readonly type: string }[]): void => {
    metrics.operationalEventsDropped.inc(events.length);
    logger.warn(
      { err: error, events: events.map((e) => e.type) },
      'operational events not published: the record committed without them',
    );
  };
  const pgStore = createPgDeliveryStore(deps.db, deps.cipher, {
    policy: outcomePolicyOf(config),
    ...(config.operationalApp === undefined
      ? {}
      : {
          operational: createPgOperationalEvents(
            config.operationalApp,
            createPgMessageStore(deps.db, deps.cipher, () => deps.wakeups.notify()),
            deps.clock,
            deps.random,
            { onDropped },
          ),
        }),
    observer: deliveryStoreMetrics(metrics),
    ...(deps.small === undefined ? {} : { small: deps.small }),
  });
  // With tracing on, each claim also reads its messages' trace contexts (the delivery spans link to them).
  const store = tracer.enabled
    ? withTraceContexts(pgStore, deps.db, (error) =>
        logger.warn({ err: error }, 'trace contexts not read: deliveries traced without a link'),
      )
    : pgStore;
  const attemptLogger = deps.attemptLogger?.child({ role: 'dispatcher', dispatcherId }) ?? logger;
  const leases = faults === null ? store : faults.deliveryStore(store);
  const brokerParts = deps.broker == null ? undefined : brokerSources(deps, deps.broker, faults, logger);
  const handoff = deps.handoff === true && brokerParts === undefined ? createHandoffSource() : undefined;
  const sources: WorkSource[] =
    brokerParts === undefined
      ? [
          createClaimSource(leases, {
            clock: deps.clock,
            sweepEveryMs: config.pollIntervalMs,
            onWake: (listener) => deps.wakeups.subscribe(listener),
          }),
        ]
      : [brokerParts.source];
  if (handoff !== undefined) sources.push(handoff);
  const dispatcher = createDispatcher({
    store: leases,
    sources,
    sender,
    clock: deps.clock,
    random: deps.random,
    logger,
    attemptLogger,
    settings: {
      dispatcherId,
      concurrency: config.concurrency,
      claimBatch: config.claimBatch,
      endpointWindowShare: config.endpointWindowShare,
      windowReserve: config.windowReserve,
      // TIDINGS_CLAIM_AHEAD is a fraction of the window; the dispatcher takes a count.
      claimAheadCount: Math.min(config.claimBatch, Math.ceil(config.concurrency * config.claimAhead)),
      attemptDeadlineMs: config.attemptDeadlineMs,
      leaseMs: config.leaseMs,
      maxReclaims: config.maxReclaims,
      pollIntervalMs: config.pollIntervalMs,
      shutdownGraceMs: config.shutdownGraceMs,
      signatureHeaders: config.signatureHeaders,
      retryPolicy: {
        delaysMs: config.retrySchedule,
        jitter: config.retryJitter,
        retryAfterMinMs: config.retryAfterMinMs,
        retryAfterMaxMs: config.retryAfterMaxMs,
      },
    },
    tracer,
    observer: {
      claimed: (count, reclaimed) => {
        metrics.deliveriesReclaimed.inc(reclaimed);
        if (count > 0) metrics.claimBatchSize.observe(count);
      },
      deadLettered: (count, reason) => metrics.deadLettered.inc({ reason }, count),
      attempted: (outcome, recorded) => {
        if (!recorded) return;
        metrics.attempts.inc({ outcome: outcome.classification.errorKind ?? 'succeeded' });
        metrics.attemptDuration.observe(outcome.result.durationMs / 1000);
        if (outcome.next.next === 'dead') metrics.deadLettered.inc({ reason: outcome.next.reason });
        if (outcome.next.next === 'retry') metrics.retriesScheduled.inc();
      },
      fencedOut: (count) => metrics.writesFencedOut.inc(count),
      leasesLost: (count) => metrics.leasesLost.inc(count),
      storeError: (error, during) => {
        if (during === 'claim') metrics.claimErrors.inc();
        // A warn line per failed call, except a database outage: counted, written once per change of state; each
        // of its calls is a debug line.
        if (isDatabaseUnavailable(error)) logger.debug({ err: error, call: during }, 'store call failed');
        storeFaultLogger.warn({ err: error, call: during }, 'store call failed');
      },
      inFlight: (count) => metrics.inFlight.set(count),
    },
  });
  return {
    dispatcher,
    sender,
    dispatcherId,
    outbox: brokerParts?.outbox,
    handoff: handoff === undefined || faults === null ? handoff : faults.handoff(handoff),
  };
}

/** The broker's work source and outbox publisher, over the delivery rows as the outbox (docs/guides/transports.md). */
function brokerSources(
  deps: DispatcherRoleDeps,
  broker: BrokerWiring,
  faults: FaultPoints | null,
  logger: Logger,
): { source: WorkSource; outbox: OutboxPublisher } {
  const { config } = deps;
  const pgOutbox = createPgBrokerOutboxStore(deps.db, deps.cipher);
  const store = faults === null ? pgOutbox : faults.brokerOutboxStore(pgOutbox);
  const m = broker.metrics;
  const source = createBrokerSource({
    transport: broker.transport,
    store,
    clock: deps.clock,
    logger,
    // Per shard, room for the whole window and an endpoint's ids ahead: an endpoint that holds its share in flight
    // (a black hole) never fills its shard's prefetch, and the other endpoints of the shard still get theirs.
    maxInFlight:
      config.brokerMaxInFlight === 0
        ? config.brokerShards * (config.concurrency + config.brokerEndpointAhead)
        : config.brokerMaxInFlight,
    sweepEveryMs: config.pollIntervalMs,
    observer: { received: m.received, acknowledged: m.acknowledged, nacked: m.nacked, deadLettered: m.deadLettered },
  });
  const outbox = createOutboxPublisher({
    store,
    transport: broker.transport,
    clock: deps.clock,
    timers: systemTimers,
    logger,
    onWake: (listener) => deps.wakeups.subscribe(listener),
    settings: {
      intervalMs: config.brokerPublishIntervalMs,
      batch: config.brokerPublishBatch,
      endpointAhead: config.brokerEndpointAhead,
      sweepAfterMs: config.brokerSweepAfterMs,
      maxReclaims: config.maxReclaims,
    },
    observer: { published: m.published, failed: m.publishFailed },
  });
  return { source, outbox };
}
