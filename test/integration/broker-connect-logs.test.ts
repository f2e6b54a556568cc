/**
 * What a dispatcher logs when its broker cannot be used from the start (docs/guides/transports.md, "Logs"), on the
 * machine's brokers: NATS at a port nothing listens on, RabbitMQ with a wrong password or a virtual host that does
 * not exist (a fresh name, so nothing is created and nothing is left behind). One line per change of state, "could
 * not connect" while it never connected, a likely-permanent cause at error level; `tidings doctor` says the same.
 * And a NATS stream deleted by hand is declared again in stream words (under a fresh prefix, deleted after).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import { afterEach, describe, test } from 'node:test';
import { Registry } from 'prom-client';
import { loadConfig } from '../../src/config/config.ts';
import { brokerFacts } from '../../src/main/broker-probe.ts';
import { createBrokerWiring } from '../../src/main/broker-transport.ts';
import { createLogger } from '../../src/observability/logger.ts';
import type { BrokerTransport } from '../../src/ports/broker.ts';
import { LogTap, type LogLine } from '../support/log-tap.ts';
import { deleteNatsTopology, deleteStream, natsStreams, natsTestPrefix } from '../support/nats.ts';
import { NATS_URL, RABBITMQ_URL } from '../support/services.ts';

/** A port on 127.0.0.1 nothing listens on (bound, then closed). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** RABBITMQ_URL with another password or virtual host. */
function rabbitUrl(change: (url: URL) => void): string {
  const url = new URL(RABBITMQ_URL);
  change(url);
  return url.toString();
}

const couldNot = (l: LogLine): boolean => typeof l.msg === 'string' && l.msg.startsWith('broker could not connect');

describe('broker connect logs', () => {
  const started: BrokerTransport[] = [];
  afterEach(async () => {
    for (const t of started.splice(0)) await t.stop();
  });

  /** Starts the wiring of `env` (without waiting for the broker unless `wait`); its log lines in the tap. */
  function start(
    env: Record<string, string>,
    wait = false,
  ): { tap: LogTap; transport: BrokerTransport; up: Promise<void> } {
    const tap = new LogTap();
    const config = loadConfig({ TIDINGS_BROKER_RECONNECT_MIN: '50ms', TIDINGS_BROKER_RECONNECT_MAX: '200ms', ...env });
    const wiring = createBrokerWiring(config, new Registry(), createLogger({ level: 'info', destination: tap }));
    assert.ok(wiring);
    started.push(wiring.transport);
    const up = wiring.transport.start({ waitForBroker: !wait });
    if (!wait) void up;
    return { tap, transport: wiring.transport, up };
  }

  /** The tap's one "could not connect" line, after a second of retries (at least five back-offs) added no other. */
  async function oneLine(tap: LogTap): Promise<LogLine> {
    await tap.waitFor(couldNot, 10_000, 'the could-not-connect line');
    await assert.rejects(tap.waitForCount(couldNot, 2, 1_000), /timed out/, 'one line, not one per attempt');
    assert.equal(tap.lines.filter((l) => String(l.msg).includes('lost')).length, 0, 'never "lost"');
    return tap.lines.find(couldNot)!;
  }

  test('NATS unreachable at start-up: one warn line, then silence while it retries', async () => {
    const { tap } = start({ TIDINGS_TRANSPORT: 'nats', TIDINGS_NATS_URL: `nats://127.0.0.1:${await closedPort()}` });
    const line = await oneLine(tap);
    assert.equal(line.level, 40, 'warn: the broker may come up');
    assert.equal(line.state, 'disconnected');
    assert.equal(line.previous, 'connecting');
    assert.equal(typeof line.reason, 'string');
  });

  test('RabbitMQ refusing the password: one error line naming the credentials, no stray "undefined:"', async () => {
    const url = rabbitUrl((u) => {
      u.password = `wrong-${randomUUID()}`;
    });
    const { tap } = start({ TIDINGS_TRANSPORT: 'rabbitmq', TIDINGS_RABBITMQ_URL: url });
    const line = await oneLine(tap);
    assert.equal(line.level, 50, JSON.stringify(line));
    assert.match(String(line.reason), /^ACCESS_REFUSED/);
    assert.match(String(line.msg), /refused the credentials.*TIDINGS_RABBITMQ_URL/);
    const doctor = await brokerFacts(loadConfig({ TIDINGS_TRANSPORT: 'rabbitmq', TIDINGS_RABBITMQ_URL: url }));
    assert.doesNotMatch(doctor.error ?? '', /undefined/, doctor.error);
    assert.match(doctor.fix ?? '', /credentials/);
  });

  test('RabbitMQ without the virtual host: one error line naming the vhost', async () => {
    const url = rabbitUrl((u) => {
      u.pathname = `/tidings-missing-${randomUUID()}`;
    });
    const { tap } = start({ TIDINGS_TRANSPORT: 'rabbitmq', TIDINGS_RABBITMQ_URL: url });
    const line = await oneLine(tap);
    assert.equal(line.level, 50, JSON.stringify(line));
    assert.match(String(line.msg), /virtual host.*TIDINGS_RABBITMQ_URL/);
  });

  test('a NATS stream deleted by hand is declared again, logged in stream words', async () => {
    const prefix = natsTestPrefix();
    try {
      const env = { TIDINGS_TRANSPORT: 'nats', TIDINGS_NATS_URL: NATS_URL, TIDINGS_BROKER_PREFIX: prefix };
      const { tap, transport, up } = start(env, true);
      await up;
      assert.equal(await deleteStream(natsStreams(prefix).stream), true);
      await transport.publish([{ deliveryId: '1', endpointId: 'ep_a' }]);
      const line = await tap.waitFor((l) => String(l.msg).startsWith('broker topology declared again'), 10_000);
      assert.equal(line.msg, 'broker topology declared again: a stream or consumer had gone');
    } finally {
      for (const t of started.splice(0)) await t.stop();
      await deleteNatsTopology(prefix);
    }
  });
});
