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

/** The broker figures of the card as label and value lines; none for postgres or without them. */
export function brokerLines(t: Pick<TransportHealth, 'depth' | 'counts'>): [string, string][] {
  const lines: [string, string][] = [];
  if (t.depth !== null) {
    lines.push(['Waiting in the broker', String(t.depth.waiting)]);
    if (t.depth.deadLetters !== null) lines.push(['Dead-lettered by the broker', String(t.depth.deadLetters)]);
  }
  if (t.counts !== null) {
    const c = t.counts;
    lines.push(['Published', `${c.published} (${c.publishFailed} not confirmed, published again)`]);
    lines.push(['Swept', `${c.swept} published again by the sweep`]);
    lines.push(['Redelivered', String(c.redelivered)]);
    const n = c.topologyRestored;
    if (n > 0) lines.push(['Topology restored', `${n} ${n === 1 ? 'time' : 'times'} (a queue had gone)`]);
  }
  return lines;
}
