/**
 * The peer of the benchmark: what a team writes instead of adopting Tidings, run as a child process
 * (started by peer.ts with `process.execPath`). Role `api`: a Fastify service whose
 * `POST /api/v1/app/:app/msg` (the Tidings path, so the same load generator drives both) puts the event on
 * a BullMQ queue and answers 202 with the message id. Role `worker`: a BullMQ worker that signs each job
 * per Standard Webhooks (the `standardwebhooks` package) and POSTs it with undici to the receiver; a
 * non-2xx fails the job, which BullMQ retries. No durability beyond Redis' own, no fencing, no timeline.
 *
 * It prints nothing on stdout; once ready it sends `{ type: 'ready', port }` over IPC and stops on SIGTERM.
 */
import { randomBytes } from 'node:crypto';
import { Queue, Worker, type Job } from 'bullmq';
import Fastify from 'fastify';
import { Webhook } from 'standardwebhooks';
import { Agent } from 'undici';
import { redisConnection, type RedisTarget } from './redis.ts';

/** The child's settings, passed as JSON in argv[2]. */
export interface PeerInit {
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

/** A job of the peer's queue: the message id (the `webhook-id`) and the payload as JSON text. */
export interface PeerJob {
  readonly id: string;
  readonly payload: string;
}

/** Job options of every add: retried with backoff, removed once done (nothing is kept). */
export const JOB_OPTIONS = { attempts: 5, backoff: { type: 'exponential', delay: 1_000 }, removeOnComplete: true, removeOnFail: 1_000 } as const;

async function api(init: PeerInit): Promise<() => Promise<void>> {
  const connection = redisConnection(init.redis);
  const queue = new Queue<PeerJob>(init.queue, { connection, prefix: init.prefix });
  const app = Fastify({ logger: false, bodyLimit: 1_048_576 });
  const auth = `Bearer ${init.token}`;
  let seq = 0;
  app.post<{ Params: { app: string }; Body: { eventType?: unknown; payload?: unknown } }>('/api/v1/app/:app/msg', async (request, reply) => {
    if (request.headers.authorization !== auth) return reply.code(401).send({ code: 'unauthorized' });
    const body = request.body;
    if (typeof body?.eventType !== 'string' || typeof body.payload !== 'object' || body.payload === null) return reply.code(422).send({ code: 'validation' });
    const id = `msg_${process.pid}_${(seq += 1)}`;
    await queue.add(body.eventType, { id, payload: JSON.stringify(body.payload) }, JOB_OPTIONS);
    return reply.code(202).send({ id, eventType: body.eventType });
  });
  app.get('/health', async () => ({ ok: true }));
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  process.send!({ type: 'ready', port: typeof address === 'object' && address !== null ? address.port : 0 });
  return async () => {
    await app.close();
    await queue.close();
    connection.disconnect();
  };
}

async function worker(init: PeerInit): Promise<() => Promise<void>> {
  const agent = new Agent({ connections: init.connectionsPerOrigin, pipelining: 1, headersTimeout: 30_000, bodyTimeout: 30_000 });
  const target = new URL(init.receiverUrl);
  const signer = new Webhook(init.secret.replace(/^whsec_/, ''));
  const connection = redisConnection(init.redis);
  const w = new Worker<PeerJob>(init.queue, async (job: Job<PeerJob>) => {
    const { id, payload } = job.data;
    const now = new Date();
    const res = await agent.request({
      origin: target.origin, path: target.pathname, method: 'POST', body: payload,
      headers: {
        'content-type': 'application/json', 'user-agent': 'bench-peer', 'webhook-id': id,
        'webhook-timestamp': String(Math.floor(now.getTime() / 1000)), 'webhook-signature': signer.sign(id, now, payload),
      },
    });
    await res.body.dump();
    if (res.statusCode < 200 || res.statusCode >= 300) throw new Error(`receiver answered ${res.statusCode}`);
  }, { connection, prefix: init.prefix, concurrency: init.concurrency });
  await w.waitUntilReady();
  process.send!({ type: 'ready', port: 0 });
  return async () => {
    await w.close();
    connection.disconnect();
    await agent.close();
  };
}

async function main(): Promise<void> {
  if (process.send === undefined) throw new Error('peer-process.ts must be started with an IPC channel (see peer.ts)');
  const init = JSON.parse(process.argv[2] ?? '{}') as PeerInit;
  const stop = init.role === 'api' ? await api(init) : await worker(init);
  process.once('SIGTERM', () => {
    const force = setTimeout(() => process.exit(1), 5_000);
    force.unref();
    void stop().finally(() => process.exit(0));
  });
}

/** A fresh `whsec_` secret (24 random bytes, base64), as Standard Webhooks secrets are written. */
export function peerSecret(): string {
  return `whsec_${randomBytes(24).toString('base64')}`;
}

if (import.meta.main) await main();
