import type { BrokerTransport } from '../../ports/broker.ts';
import type { BrokerOutboxStore } from '../../ports/broker-outbox-store.ts';
import type { Clock } from '../../ports/clock.ts';
import type { Logger } from '../../ports/logger.ts';
import type { LoopTimers } from './loop-timers.ts';

/** Settings of the outbox publisher. Durations in ms. */
export interface OutboxSettings {
  /** Time between two rounds when nothing wakes the publisher (TIDINGS_BROKER_PUBLISH_INTERVAL). */
  readonly intervalMs: number;
  /** Most rows stamped and published by one statement (TIDINGS_BROKER_PUBLISH_BATCH). */
  readonly batch: number;
  /** Most ids of one endpoint in the broker at once (TIDINGS_BROKER_ENDPOINT_AHEAD). */
  readonly endpointAhead: number;
  /** A row published this long ago and still due is published again (TIDINGS_BROKER_SWEEP_AFTER). */
  readonly sweepAfterMs: number;
  readonly maxReclaims: number;
}

/** What the publisher reports (metrics). */
export interface OutboxObserver {
  /** Ids the broker confirmed; `swept` of them were published again by the sweep. */
  published?(count: number, swept: number): void;
  /** Ids the broker did not confirm: unstamped, published again by a later round. */
  failed?(count: number): void;
}

export interface OutboxPublisherDeps {
  readonly store: Pick<BrokerOutboxStore, 'stampDue' | 'unstamp'>;
  readonly transport: Pick<BrokerTransport, 'publish' | 'state' | 'onStateChange'>;
  readonly clock: Pick<Clock, 'sqlNow'>;
  readonly timers: LoopTimers;
  readonly settings: OutboxSettings;
  readonly logger: Logger;
  /** Publish wake-ups (a commit made work due): a round runs at once. */
  readonly onWake?: (listener: () => void) => () => void;
  readonly observer?: OutboxObserver;
}

/** The outbox publisher of one dispatcher process. */
export interface OutboxPublisher {
  start(): void;
  /** Stops the rounds; resolves when the round in progress, if any, ended. */
  stop(): Promise<void>;
  /** Runs rounds until one stamps less than a batch; returns how many ids the broker confirmed. A test seam. */
  publishDue(): Promise<number>;
}

/**
 * The outbox publisher (docs/guides/transports.md): the delivery rows are the outbox. Each round stamps due rows in one
 * statement (`stampDue`: each endpoint's first due rows within its gates, expired leases, and the sweep of rows
 * published long ago and still due) and publishes their ids with the broker's confirmation; ids the broker did not
 * confirm lose their stamp and are taken by a later round. Rounds run on publish wake-ups, every `intervalMs`, and when
 * the broker connects; while it is not connected nothing is stamped and the rows wait in PostgreSQL. A failing round is
 * logged once, and its recovery once.
 */
export function createOutboxPublisher(deps: OutboxPublisherDeps): OutboxPublisher {
  const { store, transport, settings, logger } = deps;
  const observer = deps.observer ?? {};
  let running = false;
  let round: Promise<number> | undefined;
  let again = false;
  let failing = false;
  const stops: (() => void)[] = [];

  const oneRound = async (): Promise<{ published: number; stamped: number }> => {
    const stamped = await store.stampDue({
      limit: settings.batch,
      endpointAhead: settings.endpointAhead,
      sweepAfterMs: settings.sweepAfterMs,
      maxReclaims: settings.maxReclaims,
      now: deps.clock.sqlNow(),
    });
    if (stamped.deliveries.length === 0 || stamped.stampedAt === null) return { published: 0, stamped: 0 };
    const outcome = await transport.publish(stamped.deliveries);
    const confirmed = new Set(outcome.confirmed);
    const swept = stamped.deliveries.filter((d) => d.swept && confirmed.has(d.deliveryId)).length;
    if (outcome.confirmed.length > 0) observer.published?.(outcome.confirmed.length, swept);
    if (outcome.failed.length > 0) {
      observer.failed?.(outcome.failed.length);
      await store.unstamp(outcome.failed, stamped.stampedAt);
    }
    return { published: outcome.confirmed.length, stamped: stamped.deliveries.length };
  };

  const rounds = async (): Promise<number> => {
    let total = 0;
    do {
      again = false;
      for (let n = 0; n < 100 && transport.state() === 'connected'; n += 1) {
        const r = await oneRound();
        total += r.published;
        if (r.stamped < settings.batch || r.published < r.stamped) break;
      }
    } while (again && running && transport.state() === 'connected');
    return total;
  };

  const publishDue = (): Promise<number> => {
    if (round !== undefined) {
      again = true;
      return round;
    }
    round = rounds()
      .then(
        (n) => {
          if (failing) logger.info({ transport: 'outbox' }, 'outbox publishing resumed');
          failing = false;
          return n;
        },
        (error: unknown) => {
          if (!failing)
            logger.warn(
              { err: error },
              'outbox publishing failed: the due deliveries wait in PostgreSQL; retrying each interval',
            );
          failing = true;
          return 0;
        },
      )
      .finally(() => {
        round = undefined;
      });
    return round;
  };

  const kick = (): void => {
    if (running) void publishDue();
  };

  return {
    start() {
      if (running) return;
      running = true;
      stops.push(deps.timers.every(settings.intervalMs, kick));
      stops.push(
        transport.onStateChange((change) => {
          if (change.state === 'connected') kick();
        }),
      );
      if (deps.onWake !== undefined) stops.push(deps.onWake(kick));
      kick();
    },
    async stop() {
      running = false;
      for (const stop of stops.splice(0)) stop();
      await round;
    },
    publishDue,
  };
}
