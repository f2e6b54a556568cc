/**
 * The machine's NATS server with JetStream for tests (NATS_URL of services.ts: 127.0.0.1:4222, or
 * TIDINGS_TEST_NATS_URL): each test uses streams and consumers under a prefix of its own and deletes them at the end,
 * so that tests never see each other's messages and the server is left as it was. The server is never restarted by a
 * test: faults go through a TCP proxy (tcp-proxy.ts).
 */
import { randomBytes } from 'node:crypto';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { natsTopologyOf } from '../../src/adapters/nats/topology.ts';
import { NATS_URL } from './services.ts';

export { NATS_URL };

/** A prefix no other test run uses. */
export function natsTestPrefix(): string {
  return `tidings-test-${randomBytes(5).toString('hex')}`;
}

/** The URL of the NATS server through a proxy on `port` of 127.0.0.1. */
export function proxiedNatsUrl(port: number): string {
  return `nats://127.0.0.1:${port}`;
}

/** The host and port of the test server (for a TCP proxy in front of it). */
export function natsAddress(): { host: string; port: number } {
  const url = new URL(NATS_URL);
  return { host: url.hostname, port: Number(url.port || 4222) };
}

/** Runs `fn` with a JetStream manager on a connection of its own, closed afterwards. */
export async function withJsm<T>(fn: (jsm: JetStreamManager) => Promise<T>): Promise<T> {
  const nc = await connect({ servers: NATS_URL, name: 'tidings-test-admin' });
  try {
    return await fn(await jetstreamManager(nc));
  } finally {
    await nc.close();
  }
}

/** The stream names a transport with `prefix` declares. */
export function natsStreams(prefix: string): { stream: string; deadStream: string; consumers: readonly string[] } {
  const settings = { ackWaitMs: 1000, maxAckPending: 1, duplicateWindowMs: 1000 };
  const t = natsTopologyOf({ prefix, shards: 1, deliveryLimit: 1 }, settings);
  return { stream: t.stream, deadStream: t.deadStream, consumers: t.consumers };
}

/** Deletes a stream (as an operator would by hand); false when it did not exist. */
export async function deleteStream(name: string): Promise<boolean> {
  return await withJsm((jsm) => jsm.streams.delete(name).catch(() => false));
}

/** Deletes both streams (and with them every consumer) a transport with `prefix` declares. */
export async function deleteNatsTopology(prefix: string): Promise<void> {
  const { stream, deadStream } = natsStreams(prefix);
  await withJsm(async (jsm) => {
    for (const name of [stream, deadStream]) await jsm.streams.delete(name).catch(() => false);
  });
}

/** Messages stored in the work stream of `prefix` now. */
export async function storedMessages(prefix: string): Promise<number> {
  return await withJsm(async (jsm) => (await jsm.streams.info(natsStreams(prefix).stream)).state.messages);
}
