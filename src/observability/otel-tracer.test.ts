import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createTraceState, type Span, type SpanOptions, type Tracer as OtelTracer } from '@opentelemetry/api';
import type { ClaimedDelivery } from '../ports/delivery-store.ts';
import {
  carrierOf,
  createOtelTracer,
  DELIVERY_EVENTS,
  DELIVERY_SPAN,
  spanContextOf,
  urlAttributes,
} from './otel-tracer.ts';
import { tracingEnabled } from './tracing.ts';

test('url.full drops userinfo, query and fragment of an endpoint URL; server.address and server.port are set', () => {
  assert.deepEqual(urlAttributes('https://user:pa55@hooks.example.com/in/x?token=abc&sig=1#frag'), {
    'url.full': 'https://hooks.example.com/in/x',
    'server.address': 'hooks.example.com',
    'server.port': 443,
  });
  assert.deepEqual(urlAttributes('http://[::1]:8080/h?k=v'), {
    'url.full': 'http://[::1]:8080/h',
    'server.address': '::1',
    'server.port': 8080,
  });
  assert.deepEqual(urlAttributes('http://127.0.0.1/h'), {
    'url.full': 'http://127.0.0.1/h',
    'server.address': '127.0.0.1',
    'server.port': 80,
  });
  assert.equal(urlAttributes('not a url'), null);
});

test('a span context survives the stored carrier (W3C traceparent and tracestate) as a remote context', () => {
  const span = {
    traceId: '0af7651916cd43dd8448eb211c80319c',
    spanId: 'b7ad6b7169203331',
    traceFlags: 1,
    traceState: createTraceState('congo=t61rcWkgMzE,rojo=00f067aa0ba902b7'),
  };
  const carrier = carrierOf(span);
  assert.deepEqual(carrier, {
    traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
    tracestate: 'congo=t61rcWkgMzE,rojo=00f067aa0ba902b7',
  });
  const back = spanContextOf(carrier);
  assert.equal(back?.traceId, span.traceId);
  assert.equal(back?.spanId, span.spanId);
  assert.equal(back?.traceFlags, 1);
  assert.equal(back?.isRemote, true);
  assert.equal(back?.traceState?.get('rojo'), '00f067aa0ba902b7');
  assert.deepEqual(carrierOf({ traceId: span.traceId, spanId: span.spanId, traceFlags: 1 }), {
    traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
  });
});

test('a missing, malformed or all-zero traceparent gives no link', () => {
  assert.equal(spanContextOf(null), null);
  assert.equal(spanContextOf(undefined), null);
  assert.equal(spanContextOf({ traceparent: 'garbage' }), null);
  assert.equal(spanContextOf({ traceparent: '01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' }), null);
  assert.equal(spanContextOf({ traceparent: '00-00000000000000000000000000000000-b7ad6b7169203331-01' }), null);
  assert.equal(spanContextOf({ traceparent: '00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01' }), null);
});

test(
  'tracing is off unless an OTLP endpoint or a trace exporter is configured, and OTEL_SDK_DISABLED or none turn ' +
    'it off',
  () => {
    const off = { otelSdkDisabled: false, tracesExporter: [], otlpEndpoint: undefined, otlpTracesEndpoint: undefined };
    assert.equal(tracingEnabled(off), false);
    assert.equal(tracingEnabled({ ...off, otlpEndpoint: 'http://127.0.0.1:4318' }), true);
    assert.equal(tracingEnabled({ ...off, otlpTracesEndpoint: 'http://127.0.0.1:4318/v1/traces' }), true);
    assert.equal(tracingEnabled({ ...off, tracesExporter: ['otlp'] }), true);
    assert.equal(tracingEnabled({ ...off, tracesExporter: ['none'], otlpEndpoint: 'http://127.0.0.1:4318' }), false);
    assert.equal(tracingEnabled({ ...off, otelSdkDisabled: true, otlpEndpoint: 'http://127.0.0.1:4318' }), false);
  },
);

/** A fake OpenTelemetry tracer whose spans write down their name, options, attributes and events. */
function fakeTracer(): {
  tracer: OtelTracer;
  spans: {
    name: string;
    options: SpanOptions;
    attributes: Record<string, unknown>;
    events: string[];
    ended: boolean;
  }[];
} {
  const spans: {
    name: string;
    options: SpanOptions;
    attributes: Record<string, unknown>;
    events: string[];
    ended: boolean;
  }[] = [];
  const tracer = {
    startSpan(name: string, options: SpanOptions = {}) {
      const record = {
        name,
        options,
        attributes: { ...options.attributes } as Record<string, unknown>,
        events: [] as string[],
        ended: false,
      };
      spans.push(record);
      const span = {
        spanContext: () => ({ traceId: '1'.repeat(32), spanId: String(spans.length).padStart(16, '0'), traceFlags: 1 }),
        setAttribute: (k: string, v: unknown) => {
          record.attributes[k] = v;
          return span;
        },
        setStatus: () => span,
        addEvent: (n: string) => {
          record.events.push(n);
          return span;
        },
        end: () => {
          record.ended = true;
        },
      };
      return span as unknown as Span;
    },
  } as unknown as OtelTracer;
  return { tracer, spans };
}

const claimed: ClaimedDelivery = {
  deliveryId: '1',
  fencingToken: '7',
  dispatcherId: 'w',
  appId: 'app_1',
  messageId: 'msg_1',
  endpointId: 'ep_1',
  eventType: 't',
  attemptNumber: 2,
  manual: false,
  reclaimed: true,
  url: 'http://u:p@127.0.0.1:9/hook?secret=s',
  payload: Buffer.from('{"secret":1}'),
  signingKeys: [],
  headers: { authorization: 'Bearer x' },
  traceContext: { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' },
};

test(
  'a delivery span is a new trace linked to the publish span, with reclaim, lease-loss and fencing-out events ' +
    'and a client child span per attempt',
  () => {
    const { tracer, spans } = fakeTracer();
    const trace = createOtelTracer(tracer).startDelivery(claimed);
    trace.attemptStarted();
    trace.attemptEnded(
      {
        type: 'response',
        statusCode: 503,
        location: null,
        retryAfter: null,
        bodyPrefix: '',
        bodyError: null,
        durationMs: 3,
      },
      { verdict: 'retryable', errorKind: 'http_status', statusCode: 503 },
    );
    trace.leaseLost();
    trace.recorded({ next: 'retry', delayMs: 5000 }, false);
    trace.end();
    const [delivery, attempt] = spans;
    assert.equal(delivery?.name, DELIVERY_SPAN);
    assert.equal(delivery?.options.root, true);
    assert.deepEqual(
      delivery?.options.links?.map((l) => [l.context.traceId, l.context.spanId]),
      [['0af7651916cd43dd8448eb211c80319c', 'b7ad6b7169203331']],
    );
    assert.deepEqual(delivery?.events, [
      DELIVERY_EVENTS.reclaimed,
      DELIVERY_EVENTS.leaseLost,
      DELIVERY_EVENTS.fencedOut,
    ]);
    assert.equal(delivery?.attributes['tidings.recorded'], false);
    assert.equal(attempt?.name, 'POST');
    assert.deepEqual(
      {
        method: attempt?.attributes['http.request.method'],
        url: attempt?.attributes['url.full'],
        status: attempt?.attributes['http.response.status_code'],
        error: attempt?.attributes['error.type'],
      },
      { method: 'POST', url: 'http://127.0.0.1:9/hook', status: 503, error: '503' },
    );
    assert.ok(spans.every((s) => s.ended));
    const values = JSON.stringify(spans.map((s) => s.attributes));
    for (const secret of ['secret', 'Bearer', 'u:p']) assert.ok(!values.includes(secret), `attributes carry ${secret}`);
  },
);

test('docs/reference/traces.md names every span, event and tidings.* attribute the adapter writes', async () => {
  const { readFile } = await import('node:fs/promises');
  const source = await readFile(new URL('./otel-tracer.ts', import.meta.url), 'utf8');
  const doc = await readFile(new URL('../../docs/reference/traces.md', import.meta.url), 'utf8');
  const names = new Set([...source.matchAll(/'(tidings\.[a-z_.]+)'/g)].map((m) => m[1]!));
  assert.ok(names.size >= 15, `found ${names.size} names`);
  for (const name of names) assert.ok(doc.includes(`\`${name}\``), `${name} is not in docs/reference/traces.md`);
});
