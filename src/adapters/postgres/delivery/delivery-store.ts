import {
  OperationalEventType,
  planRecordActions,
  recordPolicyParams,
  type EndpointHealthChange,
  type OutcomePolicy,
  type RecordedDelivery,
} from '../../../domain/outcome-rules.ts';
import { loadConfig, type Config } from '../../../config/config.ts';
import type { Cipher } from '../../../ports/cipher.ts';
import type { AttemptRecord, DeliveryStore, LeaseRef, RecordResult } from '../../../ports/delivery-store.ts';
import { dbForRows, type Db, type Queryable, type SmallStatements } from '../db.ts';
import type { OperationalEvent, OperationalEvents } from '../../../ports/operational-events.ts';
import {
  CLAIM,
  DISABLE_ENDPOINT,
  EXTEND_LEASES,
  INSERT_ENDPOINT_EVENT,
  RECORD_ATTEMPTS,
  RELEASE_LEASES,
  SWEEP,
  THROTTLE_ENDPOINT,
} from './delivery-sql.ts';
import pg from 'pg';
import { sqlState, SqlState } from '../sqlstate.ts';
import { runTx } from '../tx.ts';
import { bind } from '../named-sql.ts';
import { createClaimedReader, type ClaimRow } from '../claimed-row.ts';

/** Most expired leases settled by the sweep that precedes each claim. */
const SWEEP_BATCH = 100;

/** Endpoint health policy of a delivery store (outcome-rules.ts); the name the store's callers know. */
export type FlowPolicy = OutcomePolicy;

/** The outcome policy of a configuration. */
export function outcomePolicyOf(
  config: Pick<Config, 'breakerThreshold' | 'breakerCooldownMs' | 'breakerMaxCooldownMs' | 'autoDisableAfterMs'>,
): OutcomePolicy {
  return {
    breakerThreshold: config.breakerThreshold,
    breakerCooldownMs: config.breakerCooldownMs,
    breakerMaxCooldownMs: config.breakerMaxCooldownMs,
    autoDisableAfterMs: config.autoDisableAfterMs,
  };
}

let defaultPolicy: OutcomePolicy | undefined;
/** The policy of the config schema's defaults (read once; the schema is their only source). */
function defaultOutcomePolicy(): OutcomePolicy {
  defaultPolicy ??= Object.freeze(outcomePolicyOf(loadConfig({})));
  return defaultPolicy;
}

/** Options of {@link createPgDeliveryStore}. */
export interface DeliveryStoreOptions {
  /** Default: the config schema's defaults. */
  readonly policy?: OutcomePolicy;
  /** Where operational events go; none = not emitted. */
  readonly operational?: OperationalEvents;
  /** Told after each committed record statement (metrics); never throws into the store. */
  readonly observer?: DeliveryStoreObserver;
  /**
   * Where the record transactions of few outcomes run, planned once (docs/adr/0016-hot-path-cost.md,
   * decision 24): on a server a pool of their own, on the embedded engine `withGenericPlans` of the one
   * session. Absent = every one on the store's `db`.
   */
  readonly small?: SmallStatements;
}

/** One outcome a record statement wrote, with the delivery's timings at the record instant (database clock). */
export interface RecordedOutcome {
  readonly record: AttemptRecord;
  /** The delivery's new state. */
  readonly state: string;
  /** Record instant − the delivery's publish, ms. */
  readonly sincePublishMs: number;
  /** Record instant − the due time the delivery was claimed for, ms. */
  readonly sinceDueMs: number;
}

/** Hooks of {@link createPgDeliveryStore} (ports for metrics; docs/adr/0013-observability.md). */
export interface DeliveryStoreObserver {
  /** A record statement committed: `statementRows` outcomes were sent in it, `written` of them were not fenced out. */
  recorded?(written: readonly RecordedOutcome[], statementRows: number): void;
  /** Endpoint transitions committed with a record statement: breaker opened or closed, endpoint disabled. */
  endpointEvents?(events: readonly OperationalEvent[]): void;
}

interface RecordRow {
  kind: 'delivery' | 'endpoint';
  id: string;
  app_id: string;
  state: string;
  endpoint_id: string;
  message_id: string | null;
  dead_reason: string | null;
  consecutive_failures: number | null;
  breaker_changed: boolean | null;
  should_disable: boolean | null;
  failing_since: Date | null;
  breaker_open_until: Date | null;
  since_publish_ms: number | null;
  since_due_ms: number | null;
}

/** Tells `observer` what a committed record statement wrote. */
function observeRecord(
  observer: DeliveryStoreObserver,
  records: readonly AttemptRecord[],
  written: readonly RecordRow[],
  events: readonly OperationalEvent[],
): void {
  const byId = new Map(written.map((r) => [r.id, r]));
  const outcomes: RecordedOutcome[] = [];
  for (const record of records) {
    const row = byId.get(record.deliveryId);
    if (row !== undefined)
      outcomes.push({
        record,
        state: row.state,
        sincePublishMs: Number(row.since_publish_ms ?? 0),
        sinceDueMs: Number(row.since_due_ms ?? 0),
      });
  }
  observer.recorded?.(outcomes, records.length);
  const changes = events.filter(
    (e) =>
      e.type === OperationalEventType.endpointDisabled ||
      e.type === OperationalEventType.breakerOpened ||
      e.type === OperationalEventType.endpointRecovered,
  );
  if (changes.length > 0) observer.endpointEvents?.(changes);
}

/**
 * The PostgreSQL {@link DeliveryStore}: the statements of delivery-sql.ts, decryption of payloads
 * (context = message id) and secrets (context = endpoint id) with `cipher`.
 */
export function createPgDeliveryStore(db: Db, cipher: Cipher, options: DeliveryStoreOptions = {}): DeliveryStore {
  const policy = options.policy ?? defaultOutcomePolicy();
  const toClaimed = createClaimedReader(cipher);

  return {
    async claim(input) {
      const swept =
        input.sweep === false
          ? { rows: [] }
          : await db.query<{ state: string }>(SWEEP, [input.maxReclaims, input.now, SWEEP_BATCH]);
      // One statement: the gate and the claim run inside the function tidings_claim (ADR 0006).
      const w = input.window;
      const held = [...(w?.held ?? new Map<string, number>())];
      const rows = (
        await db.query<ClaimRow>(CLAIM, [
          input.dispatcherId,
          input.limit,
          input.leaseMs,
          input.now,
          input.maxReclaims,
          input.excludeEndpoints ?? [],
          w?.share ?? input.limit,
          held.map(([id]) => id),
          held.map(([, n]) => n),
          w?.answering ?? [],
          w?.unresponsive ?? [],
          w?.budget ?? input.limit,
        ])
      ).rows;
      const deliveries = rows.map((row) => toClaimed(row, input.dispatcherId));
      return {
        deliveries,
        reclaimed: deliveries.filter((d) => d.reclaimed).length,
        deadLettered: swept.rows.filter((r) => r.state === 'dead').length,
      };
    },

    async extendLeases(leases, leaseMs, now) {
      const byDispatcher = groupByDispatcher(leases);
      const lost: string[] = [];
      for (const [dispatcherId, group] of byDispatcher) {
        const res = await db.query<{ id: string }>(EXTEND_LEASES, [
          group.map((l) => l.deliveryId),
          group.map((l) => l.fencingToken),
          dispatcherId,
          leaseMs,
          now,
        ]);
        const renewed = new Set(res.rows.map((r) => r.id));
        for (const l of group) if (!renewed.has(l.deliveryId)) lost.push(l.deliveryId);
      }
      return lost;
    },

    async releaseLeases(leases, now) {
      const fenced: string[] = [];
      for (const [dispatcherId, group] of groupByDispatcher(leases)) {
        const res = await db.query<{ id: string }>(RELEASE_LEASES, [
          group.map((l) => l.deliveryId),
          group.map((l) => l.fencingToken),
          dispatcherId,
          now,
        ]);
        const released = new Set(res.rows.map((r) => r.id));
        for (const l of group) if (!released.has(l.deliveryId)) fenced.push(l.deliveryId);
      }
      return fenced;
    },

    async recordAttempts(records, now): Promise<RecordResult> {
      if (records.length === 0) return { recorded: [], fencedOut: [] };
      // The response prefix may echo the customer's data: encrypted like the payload (context = attempt id).
      const sealedBodies = records.map((r) =>
        r.responseBody === '' ? null : cipher.encrypt(Buffer.from(r.responseBody, 'utf8'), r.attemptId),
      );
      const [breakerThreshold, cooldownMs, maxCooldownMs, autoDisableAfterMs] = recordPolicyParams(policy);
      const params = bind(RECORD_ATTEMPTS, {
        id: records.map((r) => r.deliveryId),
        token: records.map((r) => r.fencingToken),
        dispatcher: records.map((r) => r.dispatcherId),
        next_state: records.map((r) => (r.next.next === 'retry' ? 'pending' : r.next.next)),
        delay_ms: records.map((r) => (r.next.next === 'retry' ? r.next.delayMs : null)),
        dead_reason: records.map((r) => (r.next.next === 'dead' ? r.next.reason : null)),
        attempt_id: records.map((r) => r.attemptId),
        attempt_number: records.map((r) => r.attemptNumber),
        trig: records.map((r) => r.trigger),
        url: records.map((r) => r.url),
        succeeded: records.map((r) => r.succeeded),
        status: records.map((r) => r.statusCode),
        body_hex: sealedBodies.map((b) => (b === null ? null : b.data.toString('hex'))),
        location: records.map((r) => r.location),
        error_kind: records.map((r) => r.errorKind),
        error_detail: records.map((r) => r.errorDetail),
        duration_ms: records.map((r) => Math.round(r.durationMs)),
        body_key_id: sealedBodies.map((b) => b?.keyId ?? null),
        operator_detail: records.map((r) => (r.operatorDetail == null ? null : JSON.stringify(r.operatorDetail))),
        now,
        breaker_threshold: breakerThreshold,
        cooldown_ms: cooldownMs,
        max_cooldown_ms: maxCooldownMs,
        auto_disable_after_ms: autoDisableAfterMs,
      });
      let committedEvents: OperationalEvent[] = [];
      const written = await recordTx(dbForRows(db, options.small, records.length), async (tx, client) => {
        const rows = (await client.query<RecordRow>(RECORD_ATTEMPTS, params)).rows;
        const deliveries = rows.filter((r) => r.kind === 'delivery');
        const endpoints = rows.filter((r) => r.kind === 'endpoint');
        // The consequences are decided by the domain's outcome rules; this transaction executes them.
        const actions = planRecordActions(records, deliveries.map(toRecordedDelivery), endpoints.map(toHealthChange));
        const events: OperationalEvent[] = [];
        for (const action of actions) {
          if (action.type === 'throttle') await client.query(THROTTLE_ENDPOINT, [action.endpointId, action.ms, now]);
          else if (action.type === 'disable') {
            if (await disable(client, action.endpointId, action.reason, now)) events.push(action.event);
          } else if (action.type === 'health-event')
            await client.query(INSERT_ENDPOINT_EVENT, [action.endpointId, action.kind, action.reason, now]);
          else events.push(action.event);
        }
        if (options.operational !== undefined) await options.operational.emit(tx, events, now ?? new Date());
        committedEvents = events;
        return deliveries;
      });
      const recorded = new Set(written.map((r) => r.id));
      if (options.observer !== undefined) observeRecord(options.observer, records, written, committedEvents);
      return {
        recorded: records.filter((r) => recorded.has(r.deliveryId)).map((r) => r.deliveryId),
        fencedOut: records.filter((r) => !recorded.has(r.deliveryId)).map((r) => r.deliveryId),
      };
    },
  };
}

function toRecordedDelivery(r: RecordRow): RecordedDelivery {
  return { id: r.id, appId: r.app_id, messageId: r.message_id, state: r.state, deadReason: r.dead_reason };
}

function toHealthChange(r: RecordRow): EndpointHealthChange {
  return {
    endpointId: r.endpoint_id,
    appId: r.app_id,
    breakerState: r.state,
    breakerChanged: r.breaker_changed === true,
    consecutiveFailures: r.consecutive_failures,
    breakerOpenUntil: r.breaker_open_until,
    failingSince: r.failing_since,
    shouldDisable: r.should_disable === true,
  };
}

/**
 * Disables an endpoint (DISABLE_ENDPOINT) and tells whether this call made the transition: only then is an
 * `endpoint.disabled` event published, in the same transaction (one event per transition).
 */
async function disable(client: Queryable, endpointId: string, reason: string, now: Date | null): Promise<boolean> {
  const res = await client.query<{ transitioned: boolean }>(DISABLE_ENDPOINT, [endpointId, reason, now]);
  return res.rows[0]?.transitioned === true;
}

/** Most runs of one record transaction: the first and the retries of {@link retryRecord}. */
const RECORD_RUNS = 3;

/**
 * Whether a record transaction the database refused is run again: a row its statement saw was deleted by a
 * transaction that committed while it ran (23503: an application deleted while one of its deliveries is
 * leased, whose fenced-out outcome then references nothing), or it was a deadlock or serialization victim
 * (class 40: the deletion of an application locks its endpoints and deliveries in another order than a record).
 * Nothing of it was written; the next run's snapshot no longer sees the deleted rows, so their outcomes are
 * fenced out and the rest of the batch is recorded.
 */
function retryRecord(error: unknown): boolean {
  const state = sqlState(error);
  return (
    error instanceof pg.DatabaseError &&
    state !== undefined &&
    (state === SqlState.foreignKeyViolation || state.startsWith('40'))
  );
}

/** {@link runTx} for a record transaction, run again (at most {@link RECORD_RUNS} in all) while {@link retryRecord}. */
async function recordTx<T>(db: Db, work: Parameters<typeof runTx<T>>[1]): Promise<T> {
  for (let run = 1; ; run++) {
    try {
      return await runTx(db, work);
    } catch (error) {
      if (run >= RECORD_RUNS || !retryRecord(error)) throw error;
    }
  }
}

function groupByDispatcher(leases: readonly LeaseRef[]): Map<string, LeaseRef[]> {
  const out = new Map<string, LeaseRef[]>();
  for (const l of leases) {
    const group = out.get(l.dispatcherId);
    if (group === undefined) out.set(l.dispatcherId, [l]);
    else group.push(l);
  }
  return out;
}
