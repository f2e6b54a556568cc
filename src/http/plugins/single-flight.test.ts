import assert from 'node:assert/strict';
import { test } from 'node:test';
import { singleFlight } from './single-flight.ts';

test('calls made while a render is in progress share it; the next call after it settles starts a new one', async () => {
  let renders = 0;
  let release!: (value: string) => void;
  const shared = singleFlight(() => {
    renders++;
    return new Promise<string>((resolve) => {
      release = resolve;
    });
  });
  const first = shared();
  const second = shared();
  release('text 1');
  assert.deepEqual(await Promise.all([first, second]), ['text 1', 'text 1']);
  assert.equal(renders, 1);
  const third = shared();
  release('text 2');
  assert.equal(await third, 'text 2');
  assert.equal(renders, 2);
});

test('a failed render is not kept: the next call renders again', async () => {
  let renders = 0;
  const shared = singleFlight(async () => {
    renders++;
    if (renders === 1) throw new Error('registry failed');
    return 'text';
  });
  await assert.rejects(shared(), /registry failed/);
  assert.equal(await shared(), 'text');
});
