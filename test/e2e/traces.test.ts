/**
 * Traces across two real processes (docs/reference/traces.md): an API process and a dispatcher process on
 * the PostgreSQL server, each exporting over OTLP/HTTP (JSON) to a receiver on 127.0.0.1 that this test
 * starts. A publish request gives a request span; each delivery a span of its own, linked to the publish
 * span through the trace context stored with the message, with a child span per HTTP attempt; a reclaim
 * after a killed dispatcher is an event on the reclaiming dispatcher's delivery span; no exported value carries a
 * secret, a token, a signature or the payload.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { encodeSecret } from '../../src/domain/signing.ts';
import { TEST_ENCRYPTION_KEYS } from '../support/cipher.ts';
import { freshServerDatabase, type TestDatabase } from '../support/db.ts';
import {
  startOtlpReceiver,
  type AttributeValue,
  type OtlpReceiver,
  type ReceivedSpan,
} from '../support/otlp-receiver.ts';
import { startTidingsProcess, tidingsEnv, type TidingsProcess } from '../support/tidings-process.ts';

const API_TOKEN = 'tidings_trace_test_admin_token_0123456789';
const WAIT_MS = 60_000;
const PUBLISH_SPAN = 'POST /api/v1/app/:appId/msg';
/** A value that an endpoint URL's query may carry (a credential): it must not reach any span. */
const QUERY_SECRET = 'query-credential-5f2c9a';

/** A webhook receiver: answers 200, except that the first request to `/hold` is held until the test lets it go. */
interface Receiver {
  readonly url: string;
  readonly signatures: string[];
  /** Resolves at the first request to `/hold`. */
  readonly held: Promise<void>;
  close(): Promise<void>;
}

async function startReceiver(): Promise<Receiver> {
  const signatures: string[] = [];
  let heldOnce = false;
  let onHeld: () => void = () => undefined;
  const held = new Promise<void>((resolve) => {
    onHeld = resolve;
  });
  const parked: ServerResponse[] = [];
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    req.resume();
    req.on('end', () => {
      const signature = req.headers['webhook-signature'];
      if (typeof signature === 'string') signatures.push(signature);
      if ((req.url ?? '').startsWith('/hold') && !heldOnce) {
        heldOnce = true;
        parked.push(res);
        onHeld();
        return;
      }
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    signatures,
    held,
    close: () =>
      new Promise((resolve) => {
        for (const res of parked) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function api<T>(base: string, method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(base + path, {
    method,
    headers: { authorization: `Bearer ${API_TOKEN}`, 'content-type': 'application/json' },
    body: body === undefined ? null : JSON.stringify(body),
  });
  const text = await res.text();
  assert.ok(res.status >= 200 && res.status < 300, `${method} ${path}: ${res.status} ${text}`);
  return JSON.parse(text) as T;
}

/** Every attribute value of every span, event, link and resource, as text. */
function everyValue(spans: readonly ReceivedSpan[]): string[] {
  const out: string[] = [];
  const add = (record: Readonly<Record<string, AttributeValue>>): void => {
    for (const value of Object.values(record)) out.push(JSON.stringify(value));
  };
  for (const s of spans) {
    out.push(s.name);
    add(s.attributes);
    add(s.resource);
    for (const e of s.events) add(e.attributes);
    for (const l of s.links) add(l.attributes);
  }
  return out;
}

describe('traces across the API and a dispatcher process', () => {
  let database: TestDatabase;
  let otlp: OtlpReceiver;
  let receiver: Receiver;
  let apiProcess: TidingsProcess;
  let apiUrl: string;
  const dispatchers: TidingsProcess[] = [];
  const secrets: string[] = [];
  const payloadMarkers: string[] = [];

  const env = (extra: Record<string, string>): Record<string, string> =>
    tidingsEnv({
      DATABASE_URL: database.url ?? '',
      TIDINGS_ENCRYPTION_KEYS: TEST_ENCRYPTION_KEYS,
      TIDINGS_API_TOKEN: API_TOKEN,
      TIDINGS_EGRESS_ALLOWLIST: '127.0.0.1/32',
      HOST: '127.0.0.1',
      PORT: '0',
      TIDINGS_ADMIN_PORT: '0',
      TIDINGS_LEASE: '3s',
      TIDINGS_ATTEMPT_DEADLINE: '2s',
      TIDINGS_CONNECT_TIMEOUT: '1s',
      TIDINGS_HEADERS_TIMEOUT: '2s',
      TIDINGS_BODY_TIMEOUT: '2s',
      TIDINGS_POLL_INTERVAL: '250ms',
      TIDINGS_SHUTDOWN_GRACE: '2s',
      TIDINGS_RETRY_SCHEDULE: '100ms',
      TIDINGS_DB_POOL_SIZE: '4',
      TIDINGS_CONCURRENCY: '8',
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '100',
      ...extra,
    });
  const startDispatcher = async (name: string, extra: Record<string, string> = {}): Promise<TidingsProcess> => {
    const p = await startTidingsProcess({
      role: 'dispatcher',
      name,
      env: env({ TIDINGS_DISPATCHER_ID: name, OTEL_SERVICE_NAME: 'tidings-dispatcher', ...extra }),
    });
    dispatchers.push(p);
    return p;
  };
  const waitForDeliveries = async (messageId: string, count: number): Promise<void> => {
    const deadline = Date.now() + WAIT_MS;
    for (;;) {
      const rows = (
        await database.db.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM deliveries WHERE message_id = $1 AND state = 'succeeded'`,
          [messageId],
        )
      ).rows;
      if (rows[0]?.n === count) return;
      assert.ok(Date.now() < deadline, `deliveries of ${messageId} not all succeeded within ${WAIT_MS} ms`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };
  const setupApp = async (name: string, paths: readonly string[]): Promise<string> => {
    const app = await api<{ id: string }>(apiUrl, 'POST', '/api/v1/app', { name });
    for (const path of paths) {
      const secret = encodeSecret(randomBytes(24));
      secrets.push(secret, secret.replace(/^whsec_/, ''));
      await api(apiUrl, 'POST', `/api/v1/app/${app.id}/endpoint`, {
        url: `${receiver.url}${path}?key=${QUERY_SECRET}`,
        secret,
      });
    }
    return app.id;
  };
  const publish = async (appId: string): Promise<string> => {
    const marker = `payload-marker-${randomBytes(6).toString('hex')}`;
    payloadMarkers.push(marker);
    return (
      await api<{ id: string }>(apiUrl, 'POST', `/api/v1/app/${appId}/msg`, {
        eventType: 'trace.test',
        payload: { marker },
      })
    ).id;
  };
  const deliverySpansOf = (spans: readonly ReceivedSpan[], messageId: string): ReceivedSpan[] =>
    spans.filter((s) => s.name === 'tidings.delivery' && s.attributes['tidings.message.id'] === messageId);
  const publishSpanLinkedFrom = (spans: readonly ReceivedSpan[], delivery: ReceivedSpan): ReceivedSpan | undefined => {
    const link = delivery.links[0];
    if (link === undefined) return undefined;
    // The link names the span active in the handler: the publish request span, or its handler span.
    const linked = spans.find((s) => s.traceId === link.traceId && s.spanId === link.spanId);
    if (linked === undefined) return undefined;
    return linked.name === PUBLISH_SPAN
      ? linked
      : spans.find((s) => s.spanId === linked.parentSpanId && s.name === PUBLISH_SPAN);
  };

  before(async () => {
    database = await freshServerDatabase();
    otlp = await startOtlpReceiver();
    receiver = await startReceiver();
    apiProcess = await startTidingsProcess({
      role: 'api',
      name: 'api',
      env: env({ OTEL_SERVICE_NAME: 'tidings-api' }),
    });
    apiUrl = apiProcess.apiUrl ?? '';
  });

  after(async () => {
    for (const d of dispatchers) await d.kill().catch(() => undefined);
    await apiProcess?.stop().catch(() => undefined);
    await receiver?.close();
    await otlp?.close();
    await database?.drop();
  });

  test(
    'one message fanned out to two endpoints gives one publish span and, linked to it, two delivery spans each ' +
      'with its attempt span',
    async () => {
      const appId = await setupApp('fan-out', ['/a', '/b']);
      const dispatcher = await startDispatcher('trace-d1');
      const messageId = await publish(appId);
      await waitForDeliveries(messageId, 2);
      const spans = await otlp.waitFor(
        (all) =>
          deliverySpansOf(all, messageId).length === 2 &&
          all.some((s) => s.name === PUBLISH_SPAN && s.service === 'tidings-api'),
        WAIT_MS,
        'publish and delivery spans',
      );
      await dispatcher.stop();

      const publishSpans = spans.filter((s) => s.name === PUBLISH_SPAN);
      assert.equal(publishSpans.length, 1, 'one publish request, one publish span');
      const publishSpan = publishSpans[0]!;
      assert.equal(publishSpan.service, 'tidings-api');
      assert.equal(publishSpan.kind, 2, 'a server span');
      assert.equal(publishSpan.attributes['http.response.status_code'], 202);
      assert.equal(publishSpan.attributes['url.path'], `/api/v1/app/${appId}/msg`);

      const deliveries = deliverySpansOf(spans, messageId);
      assert.equal(
        new Set(deliveries.map((d) => d.attributes['tidings.endpoint.id'])).size,
        2,
        'one delivery span per endpoint',
      );
      for (const delivery of deliveries) {
        assert.equal(delivery.service, 'tidings-dispatcher');
        assert.notEqual(delivery.traceId, publishSpan.traceId, 'a delivery is a trace of its own');
        assert.equal(delivery.parentSpanId, '', 'a root span');
        assert.equal(delivery.links.length, 1, 'linked to the publish span');
        assert.equal(
          publishSpanLinkedFrom(spans, delivery)?.spanId,
          publishSpan.spanId,
          'the link leads to the publish span',
        );
        assert.equal(delivery.attributes['tidings.delivery.next'], 'succeeded');
        assert.equal(delivery.attributes['tidings.recorded'], true);
        const attempts = spans.filter((s) => s.parentSpanId === delivery.spanId);
        assert.equal(attempts.length, 1, 'one attempt span, a child of the delivery span');
        const attempt = attempts[0]!;
        assert.equal(attempt.traceId, delivery.traceId);
        assert.equal(attempt.name, 'POST');
        assert.equal(attempt.kind, 3, 'a client span');
        assert.equal(attempt.attributes['http.request.method'], 'POST');
        assert.equal(attempt.attributes['http.response.status_code'], 200);
        assert.equal(attempt.attributes['server.address'], '127.0.0.1');
        assert.match(
          String(attempt.attributes['url.full']),
          new RegExp(`^${receiver.url}/(a|b)$`),
          'url.full without the query',
        );
        assert.equal(attempt.attributes['error.type'], undefined);
      }
    },
  );

  test(
    "a reclaim after a killed dispatcher shows as an event on the reclaiming dispatcher's delivery span, still " +
      'linked to the publish span',
    async () => {
      const appId = await setupApp('reclaim', ['/hold']);
      // The held attempt must still be in flight when the test kills its dispatcher: a deadline with room for a
      // busy machine (the lease must exceed it by 1 s), which is also how long the takeover waits.
      const first = await startDispatcher('trace-a', {
        TIDINGS_LEASE: '6s',
        TIDINGS_ATTEMPT_DEADLINE: '5s',
        TIDINGS_HEADERS_TIMEOUT: '5s',
        TIDINGS_BODY_TIMEOUT: '5s',
      });
      const messageId = await publish(appId);
      await receiver.held;
      await first.kill();
      await startDispatcher('trace-b');
      await waitForDeliveries(messageId, 1);
      const spans = await otlp.waitFor(
        (all) => deliverySpansOf(all, messageId).some((s) => s.attributes['tidings.dispatcher.id'] === 'trace-b'),
        WAIT_MS,
        "the reclaiming dispatcher's delivery span",
      );

      const mine = deliverySpansOf(spans, messageId).filter((s) => s.attributes['tidings.dispatcher.id'] === 'trace-b');
      assert.equal(mine.length, 1);
      const span = mine[0]!;
      assert.equal(span.attributes['tidings.reclaimed'], true);
      const reclaimed = span.events.filter((e) => e.name === 'tidings.reclaimed');
      assert.equal(reclaimed.length, 1, `events: ${JSON.stringify(span.events)}`);
      assert.equal(span.attributes['tidings.delivery.next'], 'succeeded');
      const publishSpan = publishSpanLinkedFrom(spans, span);
      assert.ok(publishSpan !== undefined, 'the reclaimed delivery is linked to its publish span');
      assert.equal(publishSpan.attributes['url.path'], `/api/v1/app/${appId}/msg`);
      assert.equal(
        spans.filter((s) => s.parentSpanId === span.spanId && s.name === 'POST').length,
        1,
        "the reclaiming dispatcher's attempt span",
      );
    },
  );

  test(
    'no exported value carries an endpoint secret, the API token, a signature, the payload or a credential of an ' +
      'endpoint URL',
    async () => {
      const spans = otlp.spans();
      assert.ok(spans.length > 0);
      assert.ok(receiver.signatures.length >= 3, 'signatures were sent');
      const forbidden = [
        ...secrets,
        API_TOKEN,
        QUERY_SECRET,
        ...payloadMarkers,
        ...receiver.signatures.flatMap((header) => header.split(' ').map((part) => part.replace(/^v1,/, ''))),
      ];
      const values = everyValue(spans);
      for (const needle of forbidden) {
        const hit = values.find((v) => v.includes(needle));
        assert.equal(hit, undefined, `an exported value carries ${needle.slice(0, 12)}…: ${hit}`);
      }
      // The raw export bodies too: nothing outside the attributes carries them either.
      for (const body of otlp.bodies())
        for (const needle of forbidden) assert.ok(!body.includes(needle), `an export carries ${needle.slice(0, 12)}…`);
    },
  );
});
