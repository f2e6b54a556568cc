/**
 * Request and delivery spans of Tidings in one process (API and dispatcher), exported over OTLP/HTTP (JSON) to a
 * receiver on 127.0.0.1 (docs/reference/traces.md). Regression: a route handler's span was named after the
 * source text of the plugin that registered it (`handler - async (scoped) => { -- const api = …`), and so was
 * its `hook.name`; it is named by its route. No span carries an endpoint URL's query.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startInProcessWorld, type InProcessWorld } from '../support/in-process.ts';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../support/otlp-receiver.ts';

const WAIT_MS = 30_000;
/** A credential a customer put in its endpoint URL's query: no exported value may carry it. */
const QUERY_SECRET = 'query-token-4b1d9e';

describe('span names and URLs (in process)', () => {
  let otlp: OtlpReceiver;
  let world: InProcessWorld;
  before(async () => {
    otlp = await startOtlpReceiver();
    // The OpenTelemetry SDK reads its exporter settings from the process environment.
    const otel = {
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '50',
      OTEL_SERVICE_NAME: 'tidings-spans',
    };
    Object.assign(process.env, otel);
    world = await startInProcessWorld(otel);
  });
  after(async () => {
    await world?.stop();
    await otlp?.close();
  });

  test(
    'a handler span is named by its route, never by source text; ' + "the attempt span's url.full has no query",
    async () => {
      const app = await world.svix.application.create({ name: 'spans' });
      await world.svix.application.get(app.id);
      const ep = await world.svix.endpoint.create(app.id, {
        url: `${world.receiver.url('/spans')}?token=${QUERY_SECRET}`,
      });
      const msg = await world.svix.message.create(app.id, { eventType: 'span.test', payload: { n: 1 } });
      const attemptOf = (all: readonly ReceivedSpan[]): ReceivedSpan | undefined => {
        const delivery = all.find(
          (d) => d.name === 'tidings.delivery' && d.attributes['tidings.message.id'] === msg.id,
        );
        return delivery === undefined
          ? undefined
          : all.find((s) => s.name === 'POST' && s.parentSpanId === delivery.spanId);
      };
      const spans = await otlp.waitFor(
        (all) => attemptOf(all) !== undefined && all.some((s) => s.name === 'handler - POST /api/v1/app/:appId/msg'),
        WAIT_MS,
        "a publish handler span and the message's attempt span",
      );

      const handlers = spans.filter((s) => s.name.startsWith('handler'));
      const names = new Set(handlers.map((s) => s.name));
      for (const wanted of [
        'handler - POST /api/v1/app',
        'handler - GET /api/v1/app/:appId',
        'handler - POST /api/v1/app/:appId/endpoint',
        'handler - POST /api/v1/app/:appId/msg',
      ])
        assert.ok(names.has(wanted), `no span ${wanted}: ${[...names].join(', ')}`);
      for (const s of handlers) {
        assert.match(s.name, /^handler - (GET|POST|PUT|PATCH|DELETE) \/api\/v1\/[\w/:.-]*$/, s.name);
        assert.equal(s.attributes['hook.name'], s.name);
      }
      const sourceText = (value: string): boolean => /=>|\{|async |function /.test(value);
      const everything = (s: ReceivedSpan): string[] => [
        s.name,
        ...Object.values(s.attributes).map((v) => JSON.stringify(v)),
      ];
      assert.deepEqual(spans.flatMap(everything).filter(sourceText), [], 'no span carries source text');

      const attempt = attemptOf(spans);
      assert.ok(attempt !== undefined, 'the attempt span of the message');
      assert.equal(attempt.attributes['url.full'], world.receiver.url('/spans'));
      assert.ok(!otlp.bodies().some((b) => b.includes(QUERY_SECRET)), 'no export carries the query credential');
      assert.ok(ep.id.startsWith('ep_'));
    },
  );
});
