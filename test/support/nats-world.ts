/**
 * The broker stage (broker-world.ts) on the machine's NATS server (TIDINGS_TRANSPORT=nats): the same processes and
 * short settings, an ack wait as short as the lease (3 s), and the file's streams deleted at the end.
 */
import { createBrokerWorld, type BrokerWorld } from './broker-world.ts';
import { deleteNatsTopology, NATS_URL } from './nats.ts';

/** The settings that put a broker world on NATS (`url`: the server, or a proxy in front of it). */
export function natsSettings(url = NATS_URL): Record<string, string> {
  return { TIDINGS_TRANSPORT: 'nats', TIDINGS_NATS_URL: url, TIDINGS_NATS_ACK_WAIT: '3s' };
}

/** A broker world on NATS; its close deletes the streams of its prefix too. */
export async function createNatsWorld(settings: Readonly<Record<string, string>> = {}): Promise<BrokerWorld> {
  const world = await createBrokerWorld({ ...natsSettings(), ...settings });
  return {
    ...world,
    async close() {
      await world.close();
      await deleteNatsTopology(world.prefix).catch(() => undefined);
    },
  };
}
