import type { FastifyPluginAsync } from 'fastify';
import type { Receiver } from '../receiver.ts';
import { DEFAULT_MAX_BODY_BYTES } from './raw-body.ts';

/** Options of {@link fastifyReceiver}. */
export interface FastifyReceiverOptions {
  /** Path of the POST route inside the plugin's prefix (default `/`). */
  readonly path?: string;
  /** Largest body read, bytes (default 1 MiB); a larger one gets Fastify's 413. */
  readonly bodyLimit?: number;
}

/**
 * A Fastify plugin with one POST route that receives webhooks:
 * `app.register(fastifyReceiver(receiver), { prefix: '/webhooks' })`. Inside the plugin (and only there:
 * Fastify encapsulates it) every content type is parsed as a Buffer of the raw bytes, which the signature covers.
 */
export function fastifyReceiver(receiver: Receiver, options: FastifyReceiverOptions = {}): FastifyPluginAsync {
  const bodyLimit = options.bodyLimit ?? DEFAULT_MAX_BODY_BYTES;
  return async (instance) => {
    instance.removeAllContentTypeParsers();
    instance.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit }, (_request, body, done) => done(null, body));
    instance.post(options.path ?? '/', { bodyLimit }, async (request, reply) => {
      const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      const result = await receiver.handle({ headers: request.headers, body });
      return reply.code(result.status).headers(result.headers).send(result.body);
    });
  };
}
