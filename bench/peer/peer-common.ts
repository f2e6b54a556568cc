/**
 * What every peer process shares, whatever its queue: the Fastify ingest (`POST /api/v1/app/:app/msg`, the
 * Tidings path, so the same load generator drives it) and the signed POST of one job to the receiver
 * (Standard Webhooks with the `standardwebhooks` package, sent with undici).
 */
import { randomBytes } from 'node:crypto';
import Fastify from 'fastify';
import { Webhook } from 'standardwebhooks';
import { Agent } from 'undici';

/** A job of a peer's queue: the message id (the `webhook-id`) and the payload as JSON text. */
export interface PeerJob {
  readonly id: string;
  readonly payload: string;
}

/** A running ingest: its port and how to close it. */
export interface PeerApi {
  readonly port: number;
  close(): Promise<void>;
}

/**
 * Starts the Fastify ingest on a free loopback port. Each POST checks the Bearer token and the body's shape,
 * hands the job to `enqueue` (which resolves once the queue accepted it) and answers 202 with the message id.
 */
export async function startPeerApi(
  token: string,
  enqueue: (eventType: string, job: PeerJob) => Promise<void>,
): Promise<PeerApi> {
  const app = Fastify({ logger: false, bodyLimit: 1_048_576 });
  const auth = `Bearer ${token}`;
  let seq = 0;
  type Body = { eventType?: unknown; payload?: unknown };
  app.post<{ Params: { app: string }; Body: Body }>('/api/v1/app/:app/msg', async (request, reply) => {
    if (request.headers.authorization !== auth) return reply.code(401).send({ code: 'unauthorized' });
    const body = request.body;
    if (typeof body?.eventType !== 'string' || typeof body.payload !== 'object' || body.payload === null) {
      return reply.code(422).send({ code: 'validation' });
    }
    const id = `msg_${process.pid}_${(seq += 1)}`;
    await enqueue(body.eventType, { id, payload: JSON.stringify(body.payload) });
    return reply.code(202).send({ id, eventType: body.eventType });
  });
  app.get('/health', async () => ({ ok: true }));
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  return { port: typeof address === 'object' && address !== null ? address.port : 0, close: () => app.close() };
}

/** Signs and POSTs jobs to one receiver URL. */
export interface SignedSender {
  /** Sends one job; rejects on a non-2xx answer (the queue then retries the job). */
  send(job: PeerJob): Promise<void>;
  close(): Promise<void>;
}

/** A sender with `connections` sockets to the receiver's origin, signing with `secret` (`whsec_…`). */
export function signedSender(receiverUrl: string, secret: string, connections: number): SignedSender {
  const agent = new Agent({ connections, pipelining: 1, headersTimeout: 30_000, bodyTimeout: 30_000 });
  const target = new URL(receiverUrl);
  const signer = new Webhook(secret.replace(/^whsec_/, ''));
  return {
    async send({ id, payload }) {
      const now = new Date();
      const res = await agent.request({
        origin: target.origin,
        path: target.pathname,
        method: 'POST',
        body: payload,
        headers: {
          'content-type': 'application/json',
          'user-agent': 'bench-peer',
          'webhook-id': id,
          'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
          'webhook-signature': signer.sign(id, now, payload),
        },
      });
      await res.body.dump();
      if (res.statusCode < 200 || res.statusCode >= 300) throw new Error(`receiver answered ${res.statusCode}`);
    },
    close: () => agent.close(),
  };
}

/** A fresh `whsec_` secret (24 random bytes, base64), as Standard Webhooks secrets are written. */
export function peerSecret(): string {
  return `whsec_${randomBytes(24).toString('base64')}`;
}

/**
 * Runs a peer child's role: `start` once, then `ready` over IPC, and on SIGTERM its stop (bounded: exit 1
 * after 5 s).
 * @throws Error when the process has no IPC channel
 */
export async function runPeerChild(start: () => Promise<{ port: number; stop: () => Promise<void> }>): Promise<void> {
  if (process.send === undefined) throw new Error('a peer process must be started with an IPC channel (see peer.ts)');
  const { port, stop } = await start();
  process.send({ type: 'ready', port });
  process.once('SIGTERM', () => {
    const force = setTimeout(() => process.exit(1), 5_000);
    force.unref();
    void stop().finally(() => process.exit(0));
  });
}
