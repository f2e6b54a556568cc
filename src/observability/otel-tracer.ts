import {
  context,
  createTraceState,
  isSpanContextValid,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  TraceFlags,
  type Attributes,
  type Link,
  type Span,
  type SpanContext,
  type Tracer as OtelTracer,
} from '@opentelemetry/api';
import {
  ATTR_ERROR_TYPE,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_SERVER_ADDRESS,
  ATTR_SERVER_PORT,
  ATTR_URL_FULL,
} from '@opentelemetry/semantic-conventions';
import type { Classification, SendResult } from '../domain/attempt-outcome.ts';
import type { NextStep } from '../domain/retry-schedule.ts';
import type { ClaimedDelivery } from '../ports/delivery-store.ts';
import type { DeliveryTrace, TraceCarrier, Tracer } from '../ports/tracer.ts';
import { urlWithoutCredentials } from './safe-url.ts';

/** Name of the span of one delivery, from claim to record (docs/reference/traces.md). */
export const DELIVERY_SPAN = 'tidings.delivery';
/** Names of the events on a delivery span (docs/reference/traces.md). */
export const DELIVERY_EVENTS = Object.freeze({
  reclaimed: 'tidings.reclaimed',
  fencedOut: 'tidings.fenced_out',
  leaseLost: 'tidings.lease_lost',
});

/** `traceparent` version 00 (W3C Trace Context §3.2): version, trace id, parent id, flags. */
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** The `traceparent`/`tracestate` of a span context (W3C Trace Context §3.2, §3.3). */
export function carrierOf(span: SpanContext): TraceCarrier {
  const traceparent = `00-${span.traceId}-${span.spanId}-${(span.traceFlags & 0xff).toString(16).padStart(2, '0')}`;
  const tracestate = span.traceState?.serialize() ?? '';
  return tracestate === '' ? { traceparent } : { traceparent, tracestate };
}

/** The remote span context of a stored carrier, or null when it is absent or not a valid version-00 traceparent. */
export function spanContextOf(carrier: TraceCarrier | null | undefined): SpanContext | null {
  const match = carrier == null ? null : TRACEPARENT.exec(carrier.traceparent);
  if (match === null || carrier == null) return null;
  const span: SpanContext = {
    traceId: match[1]!,
    spanId: match[2]!,
    traceFlags: Number.parseInt(match[3]!, 16),
    isRemote: true,
    ...(carrier.tracestate === undefined || carrier.tracestate === ''
      ? {}
      : { traceState: createTraceState(carrier.tracestate) }),
  };
  return isSpanContextValid(span) ? span : null;
}

/**
 * The attributes of an endpoint URL for a client span (OpenTelemetry HTTP client semantic conventions):
 * `url.full` without userinfo, query or fragment — an endpoint URL may carry a credential in any of them —
 * `server.address` and `server.port`. Null when the URL does not parse.
 */
export function urlAttributes(url: string): Attributes | null {
  const parsed = urlWithoutCredentials(url);
  if (parsed === null) return null;
  const port = parsed.port === '' ? (parsed.protocol === 'https:' ? 443 : 80) : Number(parsed.port);
  return {
    [ATTR_URL_FULL]: parsed.href,
    [ATTR_SERVER_ADDRESS]: parsed.hostname.replace(/^\[(.*)\]$/, '$1'),
    [ATTR_SERVER_PORT]: port,
  };
}

/**
 * The `error.type` of a failed attempt: the status code for a 4xx/5xx answer (as the conventions ask), else the error
 * kind.
 */
function errorType(result: SendResult, classification: Classification): string | null {
  if (classification.verdict === 'delivered') return null;
  if (result.type === 'response' && result.statusCode >= 400) return String(result.statusCode);
  return classification.errorKind ?? 'unknown';
}

/** The trace of one delivery on the OpenTelemetry API (see {@link DeliveryTrace}). */
class OtelDeliveryTrace implements DeliveryTrace {
  readonly #tracer: OtelTracer;
  readonly #delivery: ClaimedDelivery;
  readonly #span: Span;
  #attempt: Span | null = null;

  constructor(tracer: OtelTracer, delivery: ClaimedDelivery) {
    this.#tracer = tracer;
    this.#delivery = delivery;
    const linked = spanContextOf(delivery.traceContext);
    const links: Link[] = linked === null ? [] : [{ context: linked, attributes: { 'tidings.link': 'published' } }];
    this.#span = tracer.startSpan(
      DELIVERY_SPAN,
      {
        kind: SpanKind.CONSUMER,
        root: true,
        links,
        attributes: {
          'tidings.delivery.id': delivery.deliveryId,
          'tidings.message.id': delivery.messageId,
          'tidings.endpoint.id': delivery.endpointId,
          'tidings.application.id': delivery.appId,
          'tidings.event_type': delivery.eventType,
          'tidings.attempt.number': delivery.attemptNumber,
          'tidings.attempt.trigger': delivery.manual ? 'manual' : 'scheduled',
          'tidings.dispatcher.id': delivery.dispatcherId,
          'tidings.reclaimed': delivery.reclaimed,
        },
      },
      ROOT_CONTEXT,
    );
    if (delivery.reclaimed) {
      this.#span.addEvent(DELIVERY_EVENTS.reclaimed, {
        'tidings.lease.fencing_token': delivery.fencingToken,
        'tidings.attempt.number': delivery.attemptNumber,
      });
    }
  }

  attemptStarted(): void {
    this.#attempt?.end();
    this.#attempt = this.#tracer.startSpan(
      'POST',
      {
        kind: SpanKind.CLIENT,
        attributes: {
          [ATTR_HTTP_REQUEST_METHOD]: 'POST',
          ...urlAttributes(this.#delivery.url),
          'tidings.attempt.number': this.#delivery.attemptNumber,
        },
      },
      trace.setSpan(ROOT_CONTEXT, this.#span),
    );
  }

  attemptEnded(result: SendResult, classification: Classification): void {
    const span = this.#attempt;
    if (span === null) return;
    this.#attempt = null;
    if (result.type === 'response') span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, result.statusCode);
    const error = errorType(result, classification);
    if (error !== null) {
      span.setAttribute(ATTR_ERROR_TYPE, error);
      span.setStatus({ code: SpanStatusCode.ERROR });
    }
    span.end();
  }

  leaseLost(): void {
    this.#span.addEvent(DELIVERY_EVENTS.leaseLost, { 'tidings.lease.fencing_token': this.#delivery.fencingToken });
  }

  recorded(next: NextStep, recorded: boolean): void {
    this.#span.setAttribute('tidings.recorded', recorded);
    if (!recorded) {
      this.#span.addEvent(DELIVERY_EVENTS.fencedOut, { 'tidings.lease.fencing_token': this.#delivery.fencingToken });
      return;
    }
    this.#span.setAttribute('tidings.delivery.next', next.next);
    if (next.next === 'retry') this.#span.setAttribute('tidings.retry.delay_ms', next.delayMs);
    if (next.next === 'dead') {
      this.#span.setAttribute('tidings.dead_letter.reason', next.reason);
      this.#span.setStatus({ code: SpanStatusCode.ERROR });
    }
  }

  end(): void {
    this.#attempt?.end();
    this.#attempt = null;
    this.#span.end();
  }
}

/**
 * The {@link Tracer} port on the OpenTelemetry API: spans go to whatever provider is registered (the Node SDK
 * that src/observability/tracing.ts starts). Span names, attributes and events: docs/reference/traces.md.
 */
export function createOtelTracer(tracer: OtelTracer): Tracer {
  return {
    enabled: true,
    activeContext() {
      const span = trace.getSpanContext(context.active());
      // An unsampled publish span is exported nowhere: a link to it would lead nowhere.
      if (span === undefined || !isSpanContextValid(span) || (span.traceFlags & TraceFlags.SAMPLED) === 0) return null;
      return carrierOf(span);
    },
    startDelivery: (delivery) => new OtelDeliveryTrace(tracer, delivery),
  };
}
