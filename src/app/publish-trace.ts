import type { Tracer } from '../ports/tracer.ts';
import type { Publisher } from './publish.ts';

/**
 * Publishes with the trace context of the request: each message is stored with the W3C trace context of
 * the span active when it is published (the publish request's), so that the dispatcher links its delivery
 * spans to it (docs/reference/traces.md). With tracing off, `publisher` itself is returned: nothing is added
 * to the publish path.
 */
export function withTraceContext(publisher: Publisher, tracer: Tracer): Publisher {
  if (!tracer.enabled) return publisher;
  return {
    check: (tx, message, options) => publisher.check(tx, message, options),
    publish: (tx, input, options) => publisher.publish(tx, { ...input, traceContext: tracer.activeContext() }, options),
    publishKeyed: (scope, input, options) =>
      publisher.publishKeyed(scope, { ...input, traceContext: tracer.activeContext() }, options),
  };
}
