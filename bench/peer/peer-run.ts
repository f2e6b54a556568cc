/**
 * One delivery workload of a peer: a burst published through its Fastify ingest (with the benchmark's
 * load generator) or added straight to its queue ("BullMQ alone"), delivered by its worker to the
 * benchmark receiver, measured end to end; and a paced run for publish → first attempt latency.
 */
import { createApiClient, type PublishRun } from '../load.ts';
import { startMonitor, type UsageReport } from '../monitor.ts';
import { machineCpu, machineCpuMsPerMessage } from '../procs.ts';
import type { Receiver } from '../receiver.ts';
import { directProducer, startPeer, type PeerOptions } from './peer.ts';

/** What one peer burst measured; rates per second, instants Unix ms. */
export interface PeerDelivery {
  readonly ingest: boolean;
  readonly messages: number;
  readonly delivered: number;
  readonly duplicates: number;
  readonly receiverMaxOpen: number;
  readonly deliveriesPerS: number;
  readonly publishPerS: number;
  readonly publishFailed: number;
  readonly firstError: string | null;
  readonly usage: UsageReport;
}

/** Options of a peer workload: the peer's settings without the receiver URL, plus the receiver. */
export interface PeerRunOptions extends Omit<PeerOptions, 'receiverUrl'> {
  readonly receiver: Receiver;
  readonly payloadBytes: number;
  readonly publishInFlight: number;
  readonly waitTimeoutMs: number;
  /** The pids of the peer's store for the CPU shares, by role: `redis` or `postgres` (re-read about once a second). */
  readonly storeRoles: () => Promise<Readonly<Record<string, readonly number[]>>>;
}

/** Runs one burst of `messages` through the peer (bounded by `waitTimeoutMs`) and stops it. */
export async function runPeerDelivery(o: PeerRunOptions, messages: number): Promise<PeerDelivery> {
  await o.receiver.reset();
  const peer = await startPeer({ ...o, receiverUrl: `http://127.0.0.1:${o.receiver.ports[0]}/ep0` });
  try {
    const roles = async () => ({
      ...(peer.api === null ? {} : { 'peer api': [peer.api.pid] }),
      'peer worker': [peer.worker.pid],
      ...(await o.storeRoles()),
      receiver: [o.receiver.child.pid],
      loadgen: [process.pid],
    });
    let pub: PublishRun;
    let usage: UsageReport;
    if (peer.apiUrl !== null) {
      const client = createApiClient(peer.apiUrl, peer.token, o.publishInFlight, o.payloadBytes);
      const monitor = startMonitor(roles);
      try {
        pub = await client.publishBurst('bench', messages, o.publishInFlight, () => 'bench.event', o.waitTimeoutMs);
      } finally {
        await client.close();
      }
      await o.receiver.waitForUnique(pub.acks.length, o.waitTimeoutMs, 10_000);
      usage = await monitor.stop();
    } else {
      const producer = directProducer(peer);
      const monitor = startMonitor(roles);
      try {
        pub = await producer.burst(messages, o.publishInFlight, o.payloadBytes, o.waitTimeoutMs);
      } finally {
        await producer.close();
      }
      await o.receiver.waitForUnique(pub.acks.length, o.waitTimeoutMs, 10_000);
      usage = await monitor.stop();
    }
    const stats = await o.receiver.stats();
    const end = stats.lastNewAt ?? Number.NaN;
    return {
      ingest: peer.apiUrl !== null,
      messages,
      delivered: stats.unique,
      duplicates: stats.duplicates,
      receiverMaxOpen: stats.maxOpen,
      deliveriesPerS: stats.unique / Math.max(1e-6, (end - pub.startedAt) / 1000),
      publishPerS: pub.acks.length / Math.max(1e-6, (pub.endedAt - pub.startedAt) / 1000),
      publishFailed: pub.failed,
      firstError: pub.firstError,
      usage,
    };
  } finally {
    await peer.stop();
  }
}

/** Latency percentiles of one paced run, ms, from before the publish call to the receiver's first byte. */
export interface PacedLatency {
  readonly count: number;
  readonly missing: number;
  readonly sentAtToArrival: readonly number[];
  /** From before each publish call to its answer (the publish call alone), ms. */
  readonly sentAtToAck: readonly number[];
  /**
   * Machine CPU from the first measured publish to the last first attempt, ms per message
   * ({@link machineCpuMsPerMessage}); null when /proc is not there.
   */
  readonly machineCpuMsPerMessage: number | null;
}

/**
 * Publishes at `rate`/s for `warmupMs` (not measured), then for `durationMs`, through the peer's ingest or
 * straight to its queue, and returns each message's time from before its publish call to its first arrival.
 */
export async function runPeerPaced(
  o: PeerRunOptions,
  rate: number,
  warmupMs: number,
  durationMs: number,
): Promise<PacedLatency> {
  await o.receiver.reset();
  const peer = await startPeer({ ...o, receiverUrl: `http://127.0.0.1:${o.receiver.ports[0]}/ep0` });
  try {
    const client = peer.apiUrl === null ? null : createApiClient(peer.apiUrl, peer.token, 50, o.payloadBytes);
    const producer = peer.apiUrl === null ? directProducer(peer) : null;
    const paced = (ms: number, idPrefix: string): Promise<PublishRun> =>
      client !== null
        ? client.publishPaced('bench', rate, ms, 50, 'bench.event', ms + 30_000)
        : producer!.paced(rate, ms, 50, o.payloadBytes, idPrefix);
    try {
      await paced(warmupMs, 'bmqw_');
      await o.receiver.waitForUnique(Math.round((rate * warmupMs) / 1000), 10_000, 5_000);
      await o.receiver.reset();
      const cpuBefore = machineCpu();
      const pub = await paced(durationMs, 'bmqp_');
      const keys = pub.acks.map((a) => `${a.id}@/ep0`);
      const arrived = await o.receiver.waitForKeys(keys, 60_000, 10_000);
      const cpuAfter = machineCpu();
      const values: number[] = [];
      let missing = 0;
      for (const a of pub.acks) {
        const at = arrived.get(`${a.id}@/ep0`);
        if (at === undefined) missing += 1;
        else values.push(at - a.sentAt);
      }
      return {
        count: values.length,
        missing: missing + pub.failed,
        sentAtToArrival: values,
        sentAtToAck: pub.acks.map((a) => a.ackAt - a.sentAt),
        machineCpuMsPerMessage: machineCpuMsPerMessage(cpuBefore, cpuAfter, pub.acks.length),
      };
    } finally {
      await client?.close();
      await producer?.close();
    }
  } finally {
    await peer.stop();
  }
}
