import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ManualClock } from '../../test/support/manual-clock.ts';
import type { SendResult } from '../domain/attempt-outcome.ts';
import type { VersionedReceiverAuth } from '../domain/receiver-auth.ts';
import type { OutboundRequest, Sender } from '../ports/sender.ts';
import { createReceiverAuthLookup, withReceiverAuth } from './receiver-auth-lookup.ts';

const AUTH: VersionedReceiverAuth = { version: '1', auth: { basic: { username: 'u', password: 'p' } } };

/** A source whose reads the test answers one by one. */
function scriptedSource() {
  const pending: { id: string; resolve: (v: VersionedReceiverAuth | null) => void; reject: (e: Error) => void }[] = [];
  return {
    pending,
    load: (id: string) =>
      new Promise<VersionedReceiverAuth | null>((resolve, reject) => pending.push({ id, resolve, reject })),
  };
}

test('one read per endpoint for every attempt asking at once, kept for refreshMs, then read again', async () => {
  const clock = new ManualClock();
  const source = scriptedSource();
  const lookup = createReceiverAuthLookup(source, { refreshMs: 10_000, max: 10, clock });
  const asked = [lookup('ep_a'), lookup('ep_a'), lookup('ep_a'), lookup('ep_b')];
  assert.deepEqual(
    source.pending.map((p) => p.id),
    ['ep_a', 'ep_b'],
  );
  source.pending[0]!.resolve(AUTH);
  source.pending[1]!.resolve(null);
  assert.deepEqual(await Promise.all(asked), [AUTH, AUTH, AUTH, null]);
  clock.advance(9_999);
  assert.equal(await lookup('ep_a'), AUTH);
  assert.equal(await lookup('ep_b'), null, 'an endpoint without auth is kept too');
  assert.equal(source.pending.length, 2, 'no read within refreshMs');
  clock.advance(1);
  const again = lookup('ep_a');
  assert.equal(source.pending.length, 3, 'read again once refreshMs passed');
  source.pending[2]!.resolve(null);
  assert.equal(await again, null, 'a removed configuration is seen');
});

test('a failed read is not kept: the next attempt reads again', async () => {
  const clock = new ManualClock();
  const source = scriptedSource();
  const lookup = createReceiverAuthLookup(source, { refreshMs: 10_000, max: 10, clock });
  const first = lookup('ep_a');
  source.pending[0]!.reject(new Error('connection lost'));
  await assert.rejects(first, /connection lost/);
  const second = lookup('ep_a');
  assert.equal(source.pending.length, 2);
  source.pending[1]!.resolve(AUTH);
  assert.equal(await second, AUTH);
});

test('at most max endpoints are kept, the least recently used dropped first', async () => {
  const clock = new ManualClock();
  let reads = 0;
  const lookup = createReceiverAuthLookup(
    {
      load: async () => {
        reads += 1;
        return null;
      },
    },
    { refreshMs: 60_000, max: 2, clock },
  );
  for (const id of ['a', 'b', 'a', 'c', 'a', 'b']) await lookup(id);
  assert.equal(reads, 4, 'a, b, c, then b again (dropped when c came)');
});

test('the decorator adds the auth by endpoint id; an unreadable one is receiver_auth, nothing sent', async () => {
  const sent: OutboundRequest[] = [];
  const inner: Sender = {
    send: async (r) => {
      sent.push(r);
      return {
        type: 'response',
        statusCode: 204,
        location: null,
        retryAfter: null,
        bodyPrefix: '',
        bodyError: null,
        durationMs: 1,
      };
    },
    close: async () => undefined,
  };
  const errors: string[] = [];
  const sender = withReceiverAuth(
    inner,
    async (id) => {
      if (id === 'broken') throw new Error('value under key "k1" failed authentication');
      return id === 'with' ? AUTH : null;
    },
    (id) => errors.push(id),
  );
  const request = (endpointId: string): OutboundRequest => ({
    url: 'https://x',
    headers: {},
    body: Buffer.alloc(0),
    endpointId,
  });
  await sender.send(request('with'));
  await sender.send(request('without'));
  const failed: SendResult = await sender.send(request('broken'));
  assert.deepEqual(
    sent.map((r) => r.receiverAuth ?? null),
    [AUTH, null],
  );
  assert.equal(failed.type === 'error' && failed.errorKind, 'receiver_auth');
  assert.deepEqual(errors, ['broken']);
});
