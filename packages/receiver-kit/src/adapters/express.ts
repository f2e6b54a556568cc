import type { IncomingMessage, ServerResponse } from 'node:http';
import { answer, type Receiver } from '../receiver.ts';
import { DEFAULT_MAX_BODY_BYTES, readRawBody, sendAnswer } from './raw-body.ts';

/** Options of {@link expressReceiver}. */
export interface ExpressReceiverOptions {
  /** Largest body read, bytes (default 1 MiB); a larger one gets 413 `payload_too_large`. */
  readonly maxBodyBytes?: number;
}

/** An Express (or Connect) request: node's, with the `body` a body parser may have set. */
export type ExpressRequestLike = IncomingMessage & { body?: unknown };

/**
 * Express middleware for one webhook route: `app.post('/webhooks', expressReceiver(receiver))`. It needs the raw
 * bytes the signature covers: it takes `req.body` when `express.raw()` ran before it (a Buffer), and otherwise
 * reads the body itself. When a parser such as `express.json()` already consumed and parsed the body, the
 * bytes are gone: it answers 500 `raw_body_unavailable` (mount the route before that parser, or give it
 * `express.raw({ type: '*\/*' })`).
 */
export function expressReceiver(
  receiver: Receiver,
  options: ExpressReceiverOptions = {},
): (request: ExpressRequestLike, response: ServerResponse, next: (error?: unknown) => void) => void {
  const maxBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  return (request, response, next) => {
    const run = async (): Promise<void> => {
      let body: Buffer | undefined;
      if (Buffer.isBuffer(request.body)) body = request.body;
      else if (request.body !== undefined || request.readableEnded) {
        sendAnswer(
          response,
          answer(
            500,
            'raw_body_unavailable',
            'a body parser consumed the request before the webhook route: ' +
              'mount the route before it, or use express.raw()',
          ),
        );
        return;
      }
      const raw = body ?? (await readRawBody(request, maxBytes));
      sendAnswer(response, Buffer.isBuffer(raw) ? await receiver.handle({ headers: request.headers, body: raw }) : raw);
    };
    run().catch(next);
  };
}
