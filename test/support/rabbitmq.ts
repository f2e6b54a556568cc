/**
 * The machine's RabbitMQ for tests (RABBITMQ_URL of services.ts: 127.0.0.1:5672, guest/guest, or
 * TIDINGS_TEST_RABBITMQ_URL): each test file uses names under a prefix of its own and deletes them at the end, so
 * that files never see each other's queues and the server is left as it was. The server is never restarted by a
 * test: faults go through a TCP proxy (tcp-proxy.ts).
 */
import { randomBytes } from 'node:crypto';
import { Connection } from 'rabbitmq-client';
import { topologyOf } from '../../src/adapters/rabbitmq/topology.ts';
import { RABBITMQ_URL } from './services.ts';

export { RABBITMQ_URL };

/** A prefix no other test run uses. */
export function testPrefix(): string {
  return `tidings-test-${randomBytes(5).toString('hex')}`;
}

/** The URL of RabbitMQ through a proxy on `port` of 127.0.0.1 (same credentials). */
export function proxiedUrl(port: number): string {
  const url = new URL(RABBITMQ_URL);
  url.hostname = '127.0.0.1';
  url.port = String(port);
  return url.toString();
}

/** Runs `fn` on a channel of a connection of its own, closed afterwards. */
export async function withChannel<T>(fn: (ch: Awaited<ReturnType<Connection['acquire']>>) => Promise<T>): Promise<T> {
  const conn = new Connection({ url: RABBITMQ_URL, retryLow: 100, retryHigh: 500 });
  conn.on('error', () => undefined);
  try {
    const ch = await conn.acquire();
    try {
      return await fn(ch);
    } finally {
      await ch.close().catch(() => undefined);
    }
  } finally {
    await conn.close();
  }
}

/** Deletes a queue (as an operator would by hand). */
export async function deleteQueue(queue: string): Promise<void> {
  await withChannel((ch) => ch.queueDelete({ queue }));
}

/** Deletes every queue and exchange a transport with `prefix` and up to `shards` shards declares. */
export async function deleteTopology(prefix: string, shards: number): Promise<void> {
  const topology = topologyOf({ prefix, shards, deliveryLimit: 1 });
  await withChannel(async (ch) => {
    for (const queue of [...topology.queues, topology.deadLetterQueue]) await ch.queueDelete({ queue });
    for (const exchange of [topology.exchange, topology.deadExchange]) await ch.exchangeDelete({ exchange });
  });
}

/** Ready messages of a queue now (a passive declaration: it must exist). */
export async function readyMessages(queue: string): Promise<number> {
  return await withChannel(async (ch) => (await ch.queueDeclare({ queue, passive: true })).messageCount);
}
