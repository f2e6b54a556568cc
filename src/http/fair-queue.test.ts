import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FairQueue } from './fair-queue.ts';

/** A queue and the order in which its requests were admitted (by name). */
function harness(slots: number): { queue: FairQueue; admitted: string[]; enter(key: string, name: string): void } {
  const queue = new FairQueue(slots);
  const admitted: string[] = [];
  return { queue, admitted, enter: (key, name) => void queue.enter(key, () => admitted.push(name)) };
}

test('with every slot held, 10 waiting requests of A then 1 of B: B is admitted second, not eleventh', () => {
  const { queue, admitted, enter } = harness(2);
  enter('A', 'a0');
  enter('B', 'b0');
  for (let i = 1; i <= 10; i += 1) enter('A', `a${i}`);
  enter('B', 'b1');
  assert.deepEqual(admitted, ['a0', 'b0'], 'two slots: the first of each runs, the rest wait');
  assert.equal(queue.waiting, 11);
  queue.release('A');
  queue.release('B');
  assert.deepEqual(admitted.slice(2), ['a1', 'b1'], 'A, which waited first, then B: one each in turn');
  for (let i = 0; i < 9; i += 1) queue.release('A');
  assert.deepEqual(admitted.slice(4), ['a2', 'a3', 'a4', 'a5', 'a6', 'a7', 'a8', 'a9', 'a10'], "A's own in order");
  assert.equal(queue.waiting, 0);
});

test('three credentials waiting are served in turn, one request each, each in its own order', () => {
  const { queue, admitted, enter } = harness(3);
  enter('A', 'a0');
  enter('B', 'b0');
  enter('C', 'c0');
  for (const n of [1, 2, 3]) enter('A', `a${n}`);
  for (const n of [1, 2]) enter('B', `b${n}`);
  enter('C', 'c1');
  for (let i = 0; i < 6; i += 1) queue.release(['A', 'B', 'C'][i % 3]!);
  assert.deepEqual(admitted.slice(3), ['a1', 'b1', 'c1', 'a2', 'b2', 'a3']);
});

test('a credential with nothing running is admitted at once, whatever the others hold; its second waits', () => {
  const { queue, admitted, enter } = harness(2);
  for (let i = 0; i < 5; i += 1) enter('A', `a${i}`);
  assert.deepEqual(admitted, ['a0', 'a1'], 'A alone takes every slot, and no more');
  enter('B', 'b0');
  assert.deepEqual(admitted, ['a0', 'a1', 'b0'], "B's first request does not wait for A's slots");
  assert.equal(queue.running, 3);
  enter('B', 'b1');
  queue.release('A');
  assert.deepEqual(admitted.slice(3), [], 'three run for two slots: a release frees none');
  queue.release('A');
  assert.deepEqual(admitted.slice(3), ['a2'], 'A waited first');
  queue.release('B');
  assert.deepEqual(admitted.slice(4), ['b1'], 'B keeps one running while it has any waiting');
});

test('a request taken out of the queue (its client left) is never admitted, and its turn passes on', () => {
  const queue = new FairQueue(1);
  const admitted: string[] = [];
  queue.enter('A', () => admitted.push('a0'));
  const gone = queue.enter('A', () => admitted.push('a1'));
  queue.enter('A', () => admitted.push('a2'));
  assert.notEqual(gone, null);
  gone!.cancel();
  gone!.cancel();
  queue.release('A');
  assert.deepEqual(admitted, ['a0', 'a2']);
  queue.release('A');
  assert.equal(queue.running, 0);
  assert.equal(queue.waiting, 0);
});

test('a single credential is bounded by the slots alone and gets every one', () => {
  const { queue, admitted, enter } = harness(4);
  for (let i = 0; i < 10; i += 1) enter('A', `a${i}`);
  assert.equal(admitted.length, 4);
  for (let i = 0; i < 6; i += 1) queue.release('A');
  assert.equal(admitted.length, 10);
  assert.equal(queue.running, 4);
});
