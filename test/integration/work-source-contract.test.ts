/**
 * Every transport against the work-source contract (work-source-contract.ts): the PostgreSQL claim, and RabbitMQ with
 * its outbox publisher, its broker source and the fenced claim by id, on the machine's RabbitMQ under a fresh prefix.
 */
import { createPgDeliveryStore } from '../../src/adapters/postgres/delivery/delivery-store.ts';
import { createRabbitMqTransport } from '../../src/adapters/rabbitmq/rabbitmq-transport.ts';
import { createClaimSource } from '../../src/app/dispatcher/claim-source.ts';
import { deleteTopology, RABBITMQ_URL } from '../support/rabbitmq.ts';
import { brokerFixture } from './work-source-broker-fixture.ts';
import { workSourceContract } from './work-source-contract.ts';

workSourceContract({
  name: 'postgres',
  async open(db, cipher, clock) {
    const store = createPgDeliveryStore(db, cipher);
    return {
      source: () => createClaimSource(store, { clock, sweepEveryMs: 0 }),
      pump: async () => [],
      arrived: async () => undefined,
      duplicate: async () => undefined,
      endTest: async () => undefined,
      close: async () => undefined,
    };
  },
});

workSourceContract(
  brokerFixture(
    'rabbitmq',
    (options) =>
      createRabbitMqTransport({ ...options, url: RABBITMQ_URL, connectionName: 'tidings-work-source-contract' }),
    deleteTopology,
  ),
);
