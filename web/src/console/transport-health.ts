import type { TransportHealth } from '../shared/types.ts';

/** How the overview's transport card names a transport. */
export const TRANSPORT_NAMES: Readonly<Record<TransportHealth['transport'], string>> = {
  postgres: 'PostgreSQL',
  rabbitmq: 'RabbitMQ',
  nats: 'NATS JetStream',
};

/**
 * The health word of a transport's state: `connected`; a broker connection lost or not made yet is `reconnecting`
 * (the adapter retries with back-off; due deliveries wait in PostgreSQL) or `connecting`; a stopped connection, or a
 * database that does not answer under the postgres transport, is `down`; null (this process holds no broker
 * connection) is `unknown here`.
 */
export function healthWord(t: Pick<TransportHealth, 'transport' | 'state'>): string {
  if (t.state === null) return 'unknown here';
  if (t.state === 'connected') return 'connected';
  if (t.transport === 'postgres' || t.state === 'stopped') return 'down';
  return t.state === 'connecting' ? 'connecting' : 'reconnecting';
}

/** The broker figures of the tile, each a count and what it counts; none for postgres or without them. */
export function brokerLines(t: Pick<TransportHealth, 'depth' | 'counts'>): [number, string][] {
  const lines: [number, string][] = [];
  if (t.depth !== null) {
    lines.push([t.depth.waiting, 'waiting in the broker']);
    if (t.depth.deadLetters !== null) lines.push([t.depth.deadLetters, 'dead-lettered by the broker']);
  }
  if (t.counts !== null) {
    const c = t.counts;
    lines.push([c.published, `published · ${c.publishFailed} not confirmed`]);
    lines.push([c.swept, 'swept (published again)']);
    lines.push([c.redelivered, 'redelivered']);
    if (c.topologyRestored > 0) lines.push([c.topologyRestored, 'topology restored (a queue had gone)']);
  }
  return lines;
}
