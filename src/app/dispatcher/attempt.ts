import { classifyAttempt, type Classification, type SendResult } from '../../domain/attempt-outcome.ts';
import { newId } from '../../domain/ids.ts';
import { endpointRequests } from '../../domain/outcome-rules.ts';
import { decideNextStep, parseRetryAfterMs, type NextStep, type RetryPolicy } from '../../domain/retry-schedule.ts';
import { attemptPolicy } from '../../domain/retry-policy.ts';
import { signatureHeadersFor, type SignatureHeaderSet } from '../../domain/signing.ts';
import type { Clock, Random } from '../../ports/clock.ts';
import type { AttemptRecord, ClaimedDelivery, OperatorDetail } from '../../ports/delivery-store.ts';
import type { OutboundRequest, Sender } from '../../ports/sender.ts';

/** Settings one attempt needs. */
export interface AttemptSettings {
  /** The installation's retry settings; a delivery's own policy (its snapshot) overrides them field by field. */
  readonly retryPolicy: RetryPolicy;
  /** TIDINGS_LEASE, ms: a delivery's attempt timeout is cut to what it allows (src/domain/retry-policy.ts). */
  readonly leaseMs?: number;
  /** Signature headers each request carries (TIDINGS_SIGNATURE_HEADERS); default `both`. */
  readonly signatureHeaders?: SignatureHeaderSet;
}

/** The content type of a JSON payload (a message published with `payload`). */
const JSON_CONTENT_TYPE = 'application/json';

/** Dependencies of one attempt. */
export interface AttemptDeps {
  readonly sender: Sender;
  readonly clock: Clock;
  readonly random: Random;
  readonly settings: AttemptSettings;
}

/** The finished attempt: what to record, and what happened, for the log line and metrics. */
export interface AttemptResult {
  readonly record: AttemptRecord;
  readonly result: SendResult;
  readonly classification: Classification;
  readonly next: NextStep;
}

/**
 * Stage 1, prepare: the outbound request, signed for this attempt (Standard Webhooks; docs/design.md#signing).
 * `webhook-id` (and/or `svix-id`, per `headerSet`) is the message id (the same on every retry, replay and
 * dispatcher); the timestamp is the attempt's own, in seconds. The body is the stored payload byte for byte, sent
 * as `application/json`, or for a raw message with the content type it was published with.
 */
export function prepareRequest(
  delivery: ClaimedDelivery,
  nowMs: number,
  headerSet: SignatureHeaderSet = 'both',
  deadlineMs?: number,
): OutboundRequest {
  const signed = signatureHeadersFor(
    headerSet,
    delivery.signingKeys,
    delivery.messageId,
    Math.floor(nowMs / 1000),
    delivery.payload,
  );
  return {
    url: delivery.url,
    headers: { ...delivery.headers, 'content-type': delivery.contentType ?? JSON_CONTENT_TYPE, ...signed },
    body: delivery.payload,
    poolKey: delivery.endpointId,
    endpointId: delivery.endpointId,
    ...(deadlineMs === undefined ? {} : { deadlineMs }),
  };
}

/**
 * The retry policy of one attempt of `delivery`: its snapshot over the installation's settings, field by field
 * (src/domain/retry-policy.ts). `deadlineMs` is undefined when the delivery sets no attempt timeout (the sender's
 * own, TIDINGS_ATTEMPT_DEADLINE, applies).
 */
export function deliveryPolicy(
  settings: Pick<AttemptSettings, 'retryPolicy' | 'leaseMs'>,
  delivery: Pick<ClaimedDelivery, 'retryPolicy'>,
): DeliveryPolicy {
  const installation = settings.retryPolicy;
  if (delivery.retryPolicy == null) {
    const maxAttempts = installation.maxAttempts ?? installation.delaysMs.length + 1;
    return { retry: installation, deadlineMs: undefined, maxAttempts };
  }
  const p = attemptPolicy(delivery.retryPolicy, installation.delaysMs, settings.leaseMs);
  const retry = { ...installation, delaysMs: p.delaysMs, maxAttempts: p.maxAttempts };
  return { retry, deadlineMs: p.deadlineMs, maxAttempts: p.maxAttempts };
}

/** What {@link deliveryPolicy} returns. */
export interface DeliveryPolicy {
  readonly retry: RetryPolicy;
  /** The attempt's own deadline, ms; undefined = the sender's (TIDINGS_ATTEMPT_DEADLINE). */
  readonly deadlineMs: number | undefined;
  readonly maxAttempts: number;
}

/**
 * Runs one attempt: prepare → send (never throws) → classify (pure) → decide next (pure). Returns the
 * record for the single fenced store write; it writes nothing itself.
 */
export async function runAttempt(
  deps: AttemptDeps,
  delivery: ClaimedDelivery,
  signal: AbortSignal,
): Promise<AttemptResult> {
  const own = deliveryPolicy(deps.settings, delivery);
  const request = prepareRequest(delivery, deps.clock.nowMs(), deps.settings.signatureHeaders, own.deadlineMs);
  const result = await deps.sender.send(request, signal);
  const classification = classifyAttempt(result);
  const policy = own.retry;
  const retryAfterMs =
    result.type === 'response' ? parseRetryAfterMs(result.retryAfter, deps.clock.nowMs(), policy) : null;
  const next = decideNextStep({
    attemptNumber: delivery.attemptNumber,
    classification,
    retryAfterMs,
    manual: delivery.manual,
    policy,
    random: () => deps.random.next(),
  });
  const asks = endpointRequests(classification, retryAfterMs);
  const throttles = asks.throttleMs !== null;
  const operatorDetail: OperatorDetail = {
    ...(result.network?.resolvedAddresses === undefined ? {} : { resolvedAddresses: result.network.resolvedAddresses }),
    ...(result.network === undefined ? {} : { connectedAddress: result.network.connectedAddress ?? null }),
    ...(result.network?.reason === undefined ? {} : { reason: result.network.reason }),
    ...(result.network?.decidedBy === undefined ? {} : { decidedBy: result.network.decidedBy }),
    ...(delivery.signingKeyIds === undefined ? {} : { signedWith: delivery.signingKeyIds }),
    ...(result.type === 'response' && result.retryAfter !== null
      ? {
          retryAfter: {
            received: result.retryAfter,
            delayMs: retryAfterMs,
            // Applied: it set the next attempt's delay (longer than the schedule's), or held the endpoint back.
            applied: retryAfterMs !== null && (throttles || (next.next === 'retry' && next.delayMs === retryAfterMs)),
          },
        }
      : {}),
  };
  const record: AttemptRecord = {
    deliveryId: delivery.deliveryId,
    fencingToken: delivery.fencingToken,
    dispatcherId: delivery.dispatcherId,
    endpointId: delivery.endpointId,
    attemptId: newId('atmpt', deps.clock.nowMs(), () => deps.random.next()),
    attemptNumber: delivery.attemptNumber,
    trigger: delivery.manual ? 'manual' : 'scheduled',
    url: delivery.url,
    succeeded: classification.verdict === 'delivered',
    statusCode: classification.statusCode,
    responseBody: result.type === 'response' ? result.bodyPrefix : '',
    location: result.type === 'response' ? result.location : null,
    errorKind: classification.errorKind,
    errorDetail: result.type === 'error' ? result.detail : result.bodyError,
    durationMs: result.durationMs,
    next,
    throttleEndpointMs: asks.throttleMs,
    disableEndpointReason: asks.disableReason,
    operatorDetail: Object.keys(operatorDetail).length === 0 ? null : operatorDetail,
  };
  return { record, result, classification, next };
}
