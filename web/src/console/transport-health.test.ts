import assert from 'node:assert/strict';
import { test } from 'node:test';
import { brokerLines, healthWord, TRANSPORT_NAMES } from './transport-health.ts';

test('healthWord: connected; a broker reconnecting or connecting; stopped or a database not answering is down', () => {
  assert.equal(healthWord({ transport: 'postgres', state: 'connected' }), 'connected');
  assert.equal(healthWord({ transport: 'postgres', state: 'disconnected' }), 'down');
  assert.equal(healthWord({ transport: 'rabbitmq', state: 'connected' }), 'connected');
  assert.equal(healthWord({ transport: 'rabbitmq', state: 'disconnected' }), 'reconnecting');
  assert.equal(healthWord({ transport: 'nats', state: 'connecting' }), 'connecting');
  assert.equal(healthWord({ transport: 'nats', state: 'stopped' }), 'down');
  assert.equal(healthWord({ transport: 'rabbitmq', state: null }), 'unknown here');
});

test(
  'brokerLines: depth and counters as count and words; nothing ' + 'without them; topology restorations only when any',
  () => {
    assert.deepEqual(brokerLines({ depth: null, counts: null }), []);
    const counts = { published: 12, swept: 2, publishFailed: 1, redelivered: 3, deadLettered: 0, topologyRestored: 0 };
    assert.deepEqual(brokerLines({ depth: { waiting: 5, deadLetters: null }, counts }), [
      [5, 'waiting in the broker'],
      [12, 'published · 1 not confirmed'],
      [2, 'swept (published again)'],
      [3, 'redelivered'],
    ]);
    const lines = brokerLines({ depth: { waiting: 0, deadLetters: 4 }, counts: { ...counts, topologyRestored: 1 } });
    assert.deepEqual(lines[1], [4, 'dead-lettered by the broker']);
    assert.deepEqual(lines.at(-1), [1, 'topology restored (a queue had gone)']);
    assert.deepEqual(TRANSPORT_NAMES, { postgres: 'PostgreSQL', rabbitmq: 'RabbitMQ', nats: 'NATS JetStream' });
  },
);
