/**
 * The NATS JetStream transport (src/adapters/nats/) against the broker contract, on the machine's NATS server: streams
 * and consumers under a fresh prefix per test, deleted at the end.
 */
import { createNatsTransport } from '../../src/adapters/nats/nats-transport.ts';
import { deleteNatsTopology, NATS_URL, natsTestPrefix } from '../support/nats.ts';
import { brokerContract } from './broker-contract.ts';

brokerContract('nats', {
  make: (options) =>
    createNatsTransport({
      ...options,
      url: NATS_URL,
      clientName: 'tidings-broker-contract',
      ackWaitMs: 30_000,
      maxAckPending: 1000,
      duplicateWindowMs: 120_000,
      pingIntervalMs: 10_000,
    }),
  cleanup: (prefix) => deleteNatsTopology(prefix),
  prefix: natsTestPrefix,
});
