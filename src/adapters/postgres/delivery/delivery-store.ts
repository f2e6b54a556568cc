import { createSecretKey, type KeyObject } from 'node:crypto';
import { decodeSecret, signingKeyId } from '../../../domain/signing.ts';
import type { Cipher } from '../../../ports/cipher.ts';
import type { AttemptRecord, ClaimedDelivery, DeliveryStore, LeaseRef, RecordResult } from '../../../ports/delivery-store.ts';
import type { Db, Queryable } from '../db.ts';
import type { OperationalEvent, OperationalEvents } from '../../../ports/operational-events.ts';
import { CLAIM, DISABLE_ENDPOINT, EXTEND_LEASES, RECORD_ATTEMPTS, RELEASE_LEASES, SWEEP, THROTTLE_ENDPOINT } from './delivery-sql.ts';
import { runTx } from '../tx.ts';

interface ClaimRow {
  id: string;
  fencing_token: string;
  app_id: string;
  message_id: string;
  endpoint_id: string;
  attempt_count: number;
  manual: boolean;
  reclaimed: boolean;
  event_type: string;
  payload: Buffer | null;
  payload_key_id: string | null;
  content_type: string | null;
  url: string;
  headers: Record<string, string> | null;
  secret: Buffer;
  secret_key_id: string;
  sensitive_headers: Buffer | null;
  sensitive_headers_key: string | null;
  previous_secret: Buffer | null;
  previous_secret_key_id: string | null;
}

/** Most expired leases settled by the sweep that precedes each claim. */
const SWEEP_BATCH = 100;

/** Endpoint health policy (issue 6). Durations in ms. */
export interface FlowPolicy {
  /** Consecutive failed attempts that open an endpoint's breaker. */
  readonly breakerThreshold: number;
  /** First cool-down of an open breaker; doubles with each opening in a row. */
  readonly breakerCooldownMs: number;
  readonly breakerMaxCooldownMs: number;
  /** An endpoint whose attempts have only failed for this long is disabled. */
  readonly autoDisableAfterMs: number;
}

/** Defaults of {@link FlowPolicy} (the config schema's defaults are the same). */
export const DEFAULT_FLOW_POLICY: FlowPolicy = Object.freeze({
  breakerThreshold: 10,
  breakerCooldownMs: 30_000,
  breakerMaxCooldownMs: 1_800_000,
  autoDisableAfterMs: 5 * 86_400_000,
});

/** Options of {@link createPgDeliveryStore}. */
export interface DeliveryStoreOptions {
  readonly policy?: FlowPolicy;
  /** Where operational events go; none = not emitted. */
  readonly operational?: OperationalEvents;
  /** Told after each committed record statement (metrics); never throws into the store. */
  readonly observer?: DeliveryStoreObserver;
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

/** Most endpoint signing keys a delivery store keeps imported (see `decryptSecret`). */
const SIGNING_KEY_CACHE_MAX = 10_000;

/** The consecutive failed attempt of one message after which `message.attempt.failing` is sent (Svix: the 4th). */
const FAILING_EVENT_ATTEMPT = 4;

/** Tells `observer` what a committed record statement wrote. */
function observeRecord(observer: DeliveryStoreObserver, records: readonly AttemptRecord[], written: readonly RecordRow[], events: readonly OperationalEvent[]): void {
  const byId = new Map(written.map((r) => [r.id, r]));
  const outcomes: RecordedOutcome[] = [];
  for (const record of records) {
    const row = byId.get(record.deliveryId);
    if (row !== undefined) outcomes.push({ record, state: row.state, sincePublishMs: Number(row.since_publish_ms ?? 0), sinceDueMs: Number(row.since_due_ms ?? 0) });
  }
  observer.recorded?.(outcomes, records.length);
  const changes = events.filter((e) => e.type === 'endpoint.disabled' || e.type === 'endpoint.breaker_opened' || e.type === 'endpoint.recovered');
  if (changes.length > 0) observer.endpointEvents?.(changes);
}

/**
 * The PostgreSQL {@link DeliveryStore}: the statements of delivery-sql.ts, decryption of payloads
 * (context = message id) and secrets (context = endpoint id) with `cipher`.
 */
export function createPgDeliveryStore(db: Db, cipher: Cipher, options: DeliveryStoreOptions = {}): DeliveryStore {
  const policy = options.policy ?? DEFAULT_FLOW_POLICY;
  // Signing keys by their stored ciphertext: a claim decrypts and imports each endpoint secret once, not once
  // per delivery. Bounded; a rotated or re-encrypted secret has another ciphertext and is simply a miss.
  const signingKeyCache = new Map<string, { key: KeyObject; id: string }>();
  const decryptSecret = (data: Buffer, keyId: string, endpointId: string): { key: KeyObject; id: string } => {
    const cacheKey = `${endpointId}:${keyId}:${data.toString('base64')}`;
    let entry = signingKeyCache.get(cacheKey);
    if (entry === undefined) {
      const raw = decodeSecret(cipher.decrypt(keyId, data, endpointId).toString('utf8'));
      entry = { key: createSecretKey(raw), id: signingKeyId(raw) };
      if (signingKeyCache.size >= SIGNING_KEY_CACHE_MAX) signingKeyCache.clear();
      signingKeyCache.set(cacheKey, entry);
    }
    return entry;
  };

  const toClaimed = (row: ClaimRow, workerId: string): ClaimedDelivery => {
    const secrets = [decryptSecret(row.secret, row.secret_key_id, row.endpoint_id)];
    if (row.previous_secret !== null && row.previous_secret_key_id !== null) {
      secrets.push(decryptSecret(row.previous_secret, row.previous_secret_key_id, row.endpoint_id));
    }
    const signingKeys = secrets.map((s) => s.key);
    const signingKeyIds = secrets.map((s) => s.id);
    const headers: Record<string, string> = { ...(row.headers ?? {}) };
    if (row.sensitive_headers !== null && row.sensitive_headers_key !== null) {
      Object.assign(headers, JSON.parse(cipher.decrypt(row.sensitive_headers_key, row.sensitive_headers, row.endpoint_id).toString('utf8')) as Record<string, string>);
    }
    return {
      deliveryId: row.id,
      fencingToken: row.fencing_token,
      workerId,
      appId: row.app_id,
      messageId: row.message_id,
      endpointId: row.endpoint_id,
      eventType: row.event_type,
      attemptNumber: row.attempt_count + 1,
      manual: row.manual,
      reclaimed: row.reclaimed,
      url: row.url,
      // An expunged payload is delivered as JSON null: the delivery history stays, the content is gone.
      payload: row.payload === null || row.payload_key_id === null ? Buffer.from('null') : cipher.decrypt(row.payload_key_id, row.payload, row.message_id),
      contentType: row.content_type,
      signingKeys,
      signingKeyIds,
      headers,
    };
  };

  return {
    async claim(input) {
      const swept = input.sweep === false ? { rows: [] } : await db.query<{ state: string }>(SWEEP, [input.maxReclaims, input.now, SWEEP_BATCH]);
      // One statement: the gate and the claim run inside the function tidings_claim (ADR 0006).
      const w = input.window;
      const held = [...(w?.held ?? new Map<string, number>())];
      const rows = (await db.query<ClaimRow>(CLAIM, [
        input.workerId, input.limit, input.leaseMs, input.now, input.maxReclaims, input.excludeEndpoints ?? [],
        w?.share ?? input.limit, held.map(([id]) => id), held.map(([, n]) => n),
        w?.answering ?? [], w?.unresponsive ?? [], w?.budget ?? input.limit,
      ])).rows;
      const deliveries = rows.map((row) => toClaimed(row, input.workerId));
      return { deliveries, reclaimed: deliveries.filter((d) => d.reclaimed).length, deadLettered: swept.rows.filter((r) => r.state === 'dead').length };
    },

    async extendLeases(leases, leaseMs, now) {
      const owners = groupByOwner(leases);
      const lost: string[] = [];
      for (const [owner, group] of owners) {
        const res = await db.query<{ id: string }>(EXTEND_LEASES, [group.map((l) => l.deliveryId), group.map((l) => l.fencingToken), owner, leaseMs, now]);
        const renewed = new Set(res.rows.map((r) => r.id));
        for (const l of group) if (!renewed.has(l.deliveryId)) lost.push(l.deliveryId);
      }
      return lost;
    },

    async releaseLeases(leases, now) {
      const fenced: string[] = [];
      for (const [owner, group] of groupByOwner(leases)) {
        const res = await db.query<{ id: string }>(RELEASE_LEASES, [group.map((l) => l.deliveryId), group.map((l) => l.fencingToken), owner, now]);
        const released = new Set(res.rows.map((r) => r.id));
        for (const l of group) if (!released.has(l.deliveryId)) fenced.push(l.deliveryId);
      }
      return fenced;
    },

    async recordAttempts(records, now): Promise<RecordResult> {
      if (records.length === 0) return { recorded: [], fencedOut: [] };
      // The response prefix may echo the customer's data: encrypted like the payload (context = attempt id).
      const sealedBodies = records.map((r) => (r.responseBody === '' ? null : cipher.encrypt(Buffer.from(r.responseBody, 'utf8'), r.attemptId)));
      const params: unknown[] = [
        records.map((r) => r.deliveryId),
        records.map((r) => r.fencingToken),
        records.map((r) => r.workerId),
        records.map((r) => (r.next.next === 'retry' ? 'pending' : r.next.next)),
        records.map((r) => (r.next.next === 'retry' ? r.next.delayMs : null)),
        records.map((r) => (r.next.next === 'dead' ? r.next.reason : null)),
        records.map((r) => r.attemptId),
        records.map((r) => r.attemptNumber),
        records.map((r) => r.trigger),
        records.map((r) => r.url),
        records.map((r) => r.succeeded),
        records.map((r) => r.statusCode),
        sealedBodies.map((b) => (b === null ? null : b.data.toString('hex'))),
        records.map((r) => r.location),
        records.map((r) => r.errorKind),
        records.map((r) => r.errorDetail),
        records.map((r) => Math.round(r.durationMs)),
        now,
      ];
      params.push(policy.breakerThreshold, policy.breakerCooldownMs, policy.breakerMaxCooldownMs, policy.autoDisableAfterMs);
      params.push(sealedBodies.map((b) => b?.keyId ?? null), records.map((r) => (r.operatorDetail == null ? null : JSON.stringify(r.operatorDetail))));
      let committedEvents: OperationalEvent[] = [];
      const written = await runTx(db, async (tx, client) => {
        const rows = (await client.query<RecordRow>(RECORD_ATTEMPTS, params)).rows;
        const deliveries = rows.filter((r) => r.kind === 'delivery');
        const endpoints = rows.filter((r) => r.kind === 'endpoint');
        const recordedIds = new Set(deliveries.map((r) => r.id));
        const events: OperationalEvent[] = [];
        // Endpoint effects only for outcomes that were not fenced out.
        for (const r of records) {
          if (!recordedIds.has(r.deliveryId)) continue;
          if (r.throttleEndpointMs !== null) await client.query(THROTTLE_ENDPOINT, [r.endpointId, r.throttleEndpointMs, now]);
          if (r.disableEndpointReason !== null) {
            if (!(await disable(client, r.endpointId, r.disableEndpointReason, now))) continue;
            const appId = deliveries.find((d) => d.id === r.deliveryId)?.app_id ?? '';
            events.push({ type: 'endpoint.disabled', appId, data: { appId, endpointId: r.endpointId, trigger: 'gone', reason: r.disableEndpointReason } });
          }
        }
        for (const ep of endpoints) {
          if (ep.should_disable === true) {
            const reason = `every attempt failed since ${ep.failing_since?.toISOString()}`;
            if (await disable(client, ep.endpoint_id, reason, now)) events.push({ type: 'endpoint.disabled', appId: ep.app_id, data: { appId: ep.app_id, endpointId: ep.endpoint_id, trigger: 'automatic', failSince: ep.failing_since?.toISOString(), reason } });
          }
          if (ep.breaker_changed === true) {
            await client.query('INSERT INTO endpoint_events (endpoint_id, kind, reason, at) VALUES ($1, $2, $3, coalesce($4::timestamptz, clock_timestamp()))', [
              ep.endpoint_id, ep.state === 'open' ? 'breaker_opened' : 'breaker_closed',
              ep.state === 'open' ? `${ep.consecutive_failures} consecutive failures; open until ${ep.breaker_open_until?.toISOString()}` : 'an attempt succeeded', now,
            ]);
            if (ep.state === 'open') events.push({ type: 'endpoint.breaker_opened', appId: ep.app_id, data: { appId: ep.app_id, endpointId: ep.endpoint_id, consecutiveFailures: ep.consecutive_failures, openUntil: ep.breaker_open_until?.toISOString() } });
            else events.push({ type: 'endpoint.recovered', appId: ep.app_id, data: { appId: ep.app_id, endpointId: ep.endpoint_id } });
          }
        }
        if (options.operational !== undefined) {
          for (const r of records) {
            const d = deliveries.find((x) => x.id === r.deliveryId);
            if (d === undefined || r.succeeded) continue;
            const lastAttempt = { id: r.attemptId, responseStatusCode: r.statusCode, errorKind: r.errorKind };
            const base = { appId: d.app_id, msgId: d.message_id, endpointId: r.endpointId, lastAttempt };
            if (d.state === 'dead' && d.dead_reason === 'exhausted') events.push({ type: 'message.attempt.exhausted', appId: d.app_id, data: base });
            if (r.attemptNumber === FAILING_EVENT_ATTEMPT && d.state === 'pending') events.push({ type: 'message.attempt.failing', appId: d.app_id, data: base });
          }
          await options.operational.emit(tx, events, now ?? new Date());
        }
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

/**
 * Disables an endpoint (DISABLE_ENDPOINT) and tells whether this call made the transition: only then is an
 * `endpoint.disabled` event published, in the same transaction (one event per transition).
 */
async function disable(client: Queryable, endpointId: string, reason: string, now: Date | null): Promise<boolean> {
  const res = await client.query<{ transitioned: boolean }>(DISABLE_ENDPOINT, [endpointId, reason, now]);
  return res.rows[0]?.transitioned === true;
}

function groupByOwner(leases: readonly LeaseRef[]): Map<string, LeaseRef[]> {
  const out = new Map<string, LeaseRef[]>();
  for (const l of leases) {
    const group = out.get(l.workerId);
    if (group === undefined) out.set(l.workerId, [l]);
    else group.push(l);
  }
  return out;
}
