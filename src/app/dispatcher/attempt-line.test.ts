import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { seededRandom } from '../../../test/support/random.ts';
import type { SendResult } from '../../domain/attempt-outcome.ts';
import { DEFAULT_RETRY_POLICY } from '../../domain/retry-schedule.ts';
import { REDACT_PATHS } from '../../observability/logger.ts';
import type { ClaimedDelivery } from '../../ports/delivery-store.ts';
import type { OutboundRequest } from '../../ports/sender.ts';
import { runAttempt } from './attempt.ts';
import { attemptLine } from './attempt-line.ts';

/** Top-level names the logger redacts (paths without a dot, bracket or wildcard). */
const REDACTED_NAMES = new Set(REDACT_PATHS.filter((p) => !/[.[*]/.test(p)));
const SECRET = 'whsec_c2VjcmV0LXRoYXQtbXVzdC1uZXZlci1iZS1sb2dnZWQ=';
const HEADER_VALUE = 'Bearer header-credential-never-logged';

function delivery(): ClaimedDelivery {
  return {
    deliveryId: '42',
    fencingToken: '7',
    dispatcherId: 'w1',
    appId: 'app_1',
    messageId: 'msg_1',
    endpointId: 'ep_1',
    eventType: 'invoice.paid',
    attemptNumber: 2,
    manual: false,
    reclaimed: true,
    url: 'https://user:url-password@hooks.example/path?token=query-secret',
    payload: Buffer.from('{"card":"payload-secret"}'),
    contentType: null,
    signingKeys: [Buffer.from(SECRET)],
    headers: { authorization: HEADER_VALUE },
  };
}

const outcomes: readonly SendResult[] = [
  {
    type: 'response',
    statusCode: 200,
    location: null,
    retryAfter: null,
    bodyPrefix: 'body-secret',
    bodyError: null,
    durationMs: 3,
  },
  {
    type: 'response',
    statusCode: 302,
    location: 'https://elsewhere.example/?token=location-secret',
    retryAfter: '5',
    bodyPrefix: '',
    bodyError: null,
    durationMs: 4,
  },
  { type: 'error', errorKind: 'timeout_headers', detail: 'detail-secret', durationMs: 5 },
];

test(
  'the attempt line holds only ids, numbers and flags: no key the logger redacts, no nested object, nothing of ' +
    'the request or response',
  async () => {
    for (const result of outcomes) {
      let sent: OutboundRequest | undefined;
      const outcome = await runAttempt(
        {
          sender: {
            send: async (request) => {
              sent = request;
              return result;
            },
            close: async () => undefined,
          },
          clock: { nowMs: () => 1_767_225_600_000, sqlNow: () => null },
          random: seededRandom(1),
          settings: { retryPolicy: DEFAULT_RETRY_POLICY },
        },
        delivery(),
        new AbortController().signal,
      );
      for (const recorded of [true, false]) {
        const line = attemptLine(delivery(), outcome, recorded, 8);
        for (const [key, value] of Object.entries(line)) {
          assert.ok(!REDACTED_NAMES.has(key), `${key} is a redacted name`);
          assert.ok(
            value === null || value === undefined || ['string', 'number', 'boolean'].includes(typeof value),
            `${key} holds a ${typeof value}`,
          );
        }
        const text = JSON.stringify(line);
        const signature = sent?.headers['webhook-signature'] ?? 'no signature';
        for (const leak of [
          SECRET,
          HEADER_VALUE,
          'url-password',
          'query-secret',
          'payload-secret',
          'body-secret',
          'location-secret',
          'detail-secret',
          signature,
        ]) {
          assert.ok(!text.includes(leak), `the line carries ${leak}`);
        }
        assert.equal(line.deliveryId, '42');
        assert.equal(line.recorded, recorded);
      }
    }
  },
);
