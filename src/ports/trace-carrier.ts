/**
 * A W3C trace context as propagated between processes (W3C Trace Context, §3.2 `traceparent`, §3.3
 * `tracestate`): stored with a message so that the dispatcher can link its delivery spans to the publish
 * span (docs/reference/traces.md). A file of its own: the store ports carry it and the tracer port reads it,
 * and neither of those two ports imports the other for it.
 */
export interface TraceCarrier {
  /** `00-<32 hex trace id>-<16 hex span id>-<2 hex flags>`. */
  readonly traceparent: string;
  /** Vendor entries, as received; absent when empty. */
  readonly tracestate?: string;
}
