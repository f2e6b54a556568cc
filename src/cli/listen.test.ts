import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { messagesOfPage } from './listen.ts';

test('a page of messages: each payload as its exact text, at any depth, without recursion', () => {
  const deep = `{"a":${'['.repeat(50_000)}${']'.repeat(50_000)},"n":12345678901234567890}`;
  const page =
    `{"data":[{"id":"m1","payload":${deep},"eventType":"e1","timestamp":"t1"},` +
    '{"id":"m2","eventType":"e2","timestamp":"t2","payload":"raw text"},' +
    '{"id":"m3","eventType":"e3","timestamp":"t3"},' +
    '{"id":"m4","eventType":"e4","timestamp":"t4","payload": 5 ,"x":{"payload":1}}],' +
    '"iterator":"it","done":false,"payload":3}';
  const { messages, iterator, done } = messagesOfPage(page);
  assert.deepEqual(
    messages.map((m) => [m.id, m.eventType, m.timestamp, m.payloadText]),
    [
      ['m1', 'e1', 't1', deep],
      ['m2', 'e2', 't2', '"raw text"'],
      ['m3', 'e3', 't3', '{}'],
      ['m4', 'e4', 't4', '5'],
    ],
  );
  assert.deepEqual([iterator, done], ['it', false]);
  assert.throws(() => messagesOfPage('{"nodata":[]}'), /without data/);
  assert.throws(() => messagesOfPage('not json'), /without data/);
});
