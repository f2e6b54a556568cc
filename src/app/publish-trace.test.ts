import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Tx } from '../ports/unit-of-work.ts';
import { NOOP_TRACER, type Tracer } from '../ports/tracer.ts';
import type { PublishInput, Publisher } from './publish.ts';
import { withTraceContext } from './publish-trace.ts';

const input: PublishInput = {
  appId: 'app_1',
  eventType: 't',
  eventId: null,
  channels: null,
  tags: null,
  payload: Buffer.from('{}'),
  retentionHours: null,
};

function capturing(): { publisher: Publisher; seen: PublishInput[] } {
  const seen: PublishInput[] = [];
  const publisher: Publisher = {
    check: async () => null,
    publish: async (_tx, i) => {
      seen.push(i);
      return {
        message: {
          id: 'msg_1',
          appId: i.appId,
          eventId: null,
          eventType: i.eventType,
          channels: null,
          tags: null,
          payload: i.payload,
          contentType: null,
          deliverAt: null,
          createdAt: new Date(0),
        },
        deliveries: 0,
      };
    },
    publishKeyed: async (_scope, i) => {
      seen.push(i);
      return null;
    },
  };
  return { publisher, seen };
}

test('with tracing off the publisher is not wrapped: no trace context is stored', () => {
  const { publisher } = capturing();
  assert.equal(withTraceContext(publisher, NOOP_TRACER), publisher);
});

test('with tracing on each published message carries the trace context of the span active at the call', async () => {
  const { publisher, seen } = capturing();
  let n = 0;
  const tracer: Tracer = {
    enabled: true,
    activeContext: () => ({ traceparent: `00-${'1'.repeat(32)}-${String(++n).padStart(16, '0')}-01` }),
    startDelivery: NOOP_TRACER.startDelivery,
  };
  const traced = withTraceContext(publisher, tracer);
  await traced.publish({} as Tx, input);
  await traced.publishKeyed({ appId: 'app_1', key: 'k', fingerprint: 'f' } as never, input);
  assert.deepEqual(
    seen.map((i) => i.traceContext?.traceparent),
    [`00-${'1'.repeat(32)}-0000000000000001-01`, `00-${'1'.repeat(32)}-0000000000000002-01`],
  );
  assert.equal(input.traceContext, undefined, "the caller's input is not changed");
});
