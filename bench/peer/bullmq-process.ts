/**
 * The BullMQ peer of the benchmark: what a team writes instead of adopting Tidings, run as a child process
 * (started by peer.ts with `process.execPath`). Role `api`: the Fastify ingest (peer-common.ts) that puts
 * each event on a BullMQ queue and answers 202 with the message id. Role `worker`: a BullMQ worker that
 * signs each job per Standard Webhooks and POSTs it to the receiver; a non-2xx fails the job, which BullMQ
 * retries. No durability beyond Redis' own, no fencing, no timeline.
 *
 * It prints nothing on stdout; once ready it sends `{ type: 'ready', port }` over IPC and stops on SIGTERM.
 */
import { Queue, Worker, type Job } from 'bullmq';
import { runPeerChild, signedSender, startPeerApi, type PeerJob } from './peer-common.ts';
import { redisConnection, type RedisTarget } from './redis.ts';

/** The child's settings, passed as JSON in argv[2]. */
export interface BullmqInit {
  readonly role: 'api' | 'worker';
  readonly redis: RedisTarget;
  /** BullMQ key prefix, private to one benchmark invocation. */
  readonly prefix: string;
  readonly queue: string;
  /** api: the Bearer token it accepts. */
  readonly token: string;
  /** worker: where every job is POSTed, jobs in flight, sockets per origin, and the signing secret (`whsec_…`). */
  readonly receiverUrl: string;
  readonly concurrency: number;
  readonly connectionsPerOrigin: number;
  readonly secret: string;
}

/** Job options of every add: retried with backoff, removed once done (nothing is kept). */
export const JOB_OPTIONS = {
  attempts: 5,
  backoff: { type: 'exponential', delay: 1_000 },
  removeOnComplete: true,
  removeOnFail: 1_000,
} as const;

async function api(init: BullmqInit): Promise<{ port: number; stop: () => Promise<void> }> {
  const connection = redisConnection(init.redis);
  const queue = new Queue<PeerJob>(init.queue, { connection, prefix: init.prefix });
  const server = await startPeerApi(init.token, async (eventType, job) => {
    await queue.add(eventType, job, JOB_OPTIONS);
  });
  return {
    port: server.port,
    async stop() {
      await server.close();
      await queue.close();
      connection.disconnect();
    },
  };
}

async function worker(init: BullmqInit): Promise<{ port: number; stop: () => Promise<void> }> {
  const sender = signedSender(init.receiverUrl, init.secret, init.connectionsPerOrigin);
  const connection = redisConnection(init.redis);
  const w = new Worker<PeerJob>(init.queue, async (job: Job<PeerJob>) => sender.send(job.data), {
    connection,
    prefix: init.prefix,
    concurrency: init.concurrency,
  });
  await w.waitUntilReady();
  return {
    port: 0,
    async stop() {
      await w.close();
      connection.disconnect();
      await sender.close();
    },
  };
}

if (import.meta.main) {
  const init = JSON.parse(process.argv[2] ?? '{}') as BullmqInit;
  await runPeerChild(() => (init.role === 'api' ? api(init) : worker(init)));
}
