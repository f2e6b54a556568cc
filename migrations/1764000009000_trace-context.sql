-- Up Migration
-- The W3C trace context of the request that published a message (docs/reference/traces.md): a JSON object
-- {"traceparent": "00-…", "tracestate": "…"} (W3C Trace Context, §3), written by the publish statement only
-- when tracing is on, NULL otherwise. A dispatcher — possibly another process, possibly much later — reads
-- it after its claim and links each delivery span to the publish span (docs/adr/0014-traces.md).

ALTER TABLE messages ADD COLUMN trace_context jsonb;
