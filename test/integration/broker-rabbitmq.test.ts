/**
 * The RabbitMQ transport (src/adapters/rabbitmq/) against the broker contract, on the machine's RabbitMQ: names under a
 * fresh prefix per test, deleted at the end.
 */
import { createRabbitMqTransport } from '../../src/adapters/rabbitmq/rabbitmq-transport.ts';
import { deleteTopology, RABBITMQ_URL, testPrefix } from '../support/rabbitmq.ts';
import { brokerContract } from './broker-contract.ts';

brokerContract('rabbitmq', {
  make: (options) =>
    createRabbitMqTransport({ ...options, url: RABBITMQ_URL, connectionName: 'tidings-broker-contract' }),
  cleanup: deleteTopology,
  prefix: testPrefix,
});
