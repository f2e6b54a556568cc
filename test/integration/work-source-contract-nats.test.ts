/**
 * The NATS JetStream transport against the work-source contract (work-source-contract.ts): its outbox publisher, broker
 * sources and the fenced claim by id over PostgreSQL, on the machine's NATS server under a fresh prefix.
 */
import { createNatsTransport } from '../../src/adapters/nats/nats-transport.ts';
import { deleteNatsTopology, NATS_URL } from '../support/nats.ts';
import { brokerFixture } from './work-source-broker-fixture.ts';
import { workSourceContract } from './work-source-contract.ts';

workSourceContract(
  brokerFixture(
    'nats',
    (options) =>
      createNatsTransport({
        ...options,
        url: NATS_URL,
        clientName: 'tidings-work-source-contract',
        ackWaitMs: 30_000,
        maxAckPending: 1000,
        duplicateWindowMs: 120_000,
        pingIntervalMs: 10_000,
      }),
    (prefix) => deleteNatsTopology(prefix),
  ),
);
