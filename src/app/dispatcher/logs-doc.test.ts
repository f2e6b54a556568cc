import { strict as assert } from 'node:assert';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';
import { seededRandom } from '../../../test/support/random.ts';
import type { SendResult } from '../../domain/attempt-outcome.ts';
import { DEFAULT_RETRY_POLICY } from '../../domain/retry-schedule.ts';
import type { ClaimedDelivery } from '../../ports/delivery-store.ts';
import { runAttempt } from './attempt.ts';
import { attemptLine } from './attempt-line.ts';

const delivery: ClaimedDelivery = {
  deliveryId: '1',
  fencingToken: '1',
  dispatcherId: 'w',
  appId: 'app_1',
  messageId: 'msg_1',
  endpointId: 'ep_1',
  eventType: 'e',
  attemptNumber: 1,
  manual: false,
  reclaimed: false,
  url: 'https://hooks.example/',
  payload: Buffer.from('{}'),
  signingKeys: [Buffer.from('k')],
  headers: {},
};

test('docs/reference/logs.md lists exactly the fields of the attempt line, each once', async () => {
  const doc = await readFile(new URL('../../../docs/reference/logs.md', import.meta.url), 'utf8');
  const section = doc.slice(doc.indexOf('## The attempt line'));
  const documented = [...section.matchAll(/^\| `([a-zA-Z]+)` \|/gm)].map((m) => m[1]!);
  assert.equal(new Set(documented).size, documented.length, 'each field once');
  const results: SendResult[] = [
    {
      type: 'response',
      statusCode: 500,
      location: null,
      retryAfter: null,
      bodyPrefix: '',
      bodyError: null,
      durationMs: 3,
    },
    {
      type: 'response',
      statusCode: 200,
      location: null,
      retryAfter: null,
      bodyPrefix: '',
      bodyError: null,
      durationMs: 3,
    },
  ];
  const written = new Set<string>();
  for (const result of results) {
    for (const d of [delivery, { ...delivery, attemptNumber: DEFAULT_RETRY_POLICY.delaysMs.length + 1 }]) {
      const outcome = await runAttempt(
        {
          sender: { send: async () => result, close: async () => undefined },
          clock: { nowMs: () => 1_767_225_600_000, sqlNow: () => null },
          random: seededRandom(1),
          settings: { retryPolicy: DEFAULT_RETRY_POLICY },
        },
        d,
        new AbortController().signal,
      );
      for (const key of Object.keys(attemptLine(d, outcome, true, 8))) written.add(key);
    }
  }
  assert.deepEqual([...written].sort(), [...documented].sort());
});
