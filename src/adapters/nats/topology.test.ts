import assert from 'node:assert/strict';
import { test } from 'node:test';
import { backoffMs } from './nats-link.ts';
import { natsTopologyOf, shardConsumerConfig, streamConfigs } from './topology.ts';

const settings = { ackWaitMs: 60_000, maxAckPending: 500, duplicateWindowMs: 120_000 };

test('every name is under the prefix; a dot of the prefix becomes _ in stream and consumer names', () => {
  const t = natsTopologyOf({ prefix: 'acme.prod', shards: 3, deliveryLimit: 5 }, settings);
  assert.equal(t.stream, 'acme_prod_deliveries');
  assert.deepEqual(t.subjects, ['acme.prod.deliveries.0', 'acme.prod.deliveries.1', 'acme.prod.deliveries.2']);
  assert.deepEqual(t.consumers, ['acme_prod_deliveries_0', 'acme_prod_deliveries_1', 'acme_prod_deliveries_2']);
  assert.equal(t.deadStream, 'acme_prod_dead_letters');
  assert.deepEqual(t.deadSubjects, ['$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.acme_prod_deliveries.*']);
});

test('each shard consumer reads only its subject: explicit acks, ack_wait, max_deliver, max_ack_pending', () => {
  const t = natsTopologyOf({ prefix: 'p', shards: 2, deliveryLimit: 4 }, settings);
  const c = shardConsumerConfig(t, 1);
  assert.equal(c.durable_name, 'p_deliveries_1');
  assert.equal(c.filter_subject, 'p.deliveries.1');
  assert.equal(c.ack_policy, 'explicit');
  assert.equal(c.ack_wait, 60_000 * 1_000_000, 'nanoseconds');
  assert.equal(c.max_deliver, 4, 'JetStream counts deliveries, the first one included, as deliveryLimit does');
  assert.equal(c.max_ack_pending, 500);
});

test('both streams are work queues on file; the work stream keeps a Nats-Msg-Id for its duplicate window', () => {
  const t = natsTopologyOf({ prefix: 'p', shards: 0, deliveryLimit: 0 }, settings);
  assert.equal(t.subjects.length, 1, 'at least one shard');
  assert.equal(t.maxDeliver, 1, 'at least one delivery');
  const { work, dead } = streamConfigs(t);
  assert.equal(work.retention, 'workqueue');
  assert.equal(dead.retention, 'workqueue');
  assert.equal(work.storage, 'file');
  assert.equal(work.duplicate_window, 120_000 * 1_000_000);
});

test('the reconnect back-off doubles from the least wait to the most and stays there', () => {
  assert.deepEqual(
    [1, 2, 3, 4, 5, 6, 50].map((n) => backoffMs(n, 100, 1000)),
    [100, 200, 400, 800, 1000, 1000, 1000],
  );
  assert.equal(backoffMs(0, 100, 1000), 100);
});
