import type { IncomingMessage, ServerResponse } from 'node:http';
import { answer, type Receiver } from '../receiver.ts';
import { DEFAULT_MAX_BODY_BYTES, readRawBody, sendAnswer } from './raw-body.ts';

export { DEFAULT_MAX_BODY_BYTES } from './raw-body.ts';

/** Options of {@link nodeHandler}. */
export interface NodeHandlerOptions {
  /** Largest body read, bytes (default 1 MiB); a larger one gets 413 `payload_too_large`. */
  readonly maxBodyBytes?: number;
}

/**
 * A node:http request listener for one webhook path: reads the raw body (up to `maxBodyBytes`), lets the
 * receiver verify and handle it, and writes its answer. Anything but POST gets 405.
 * @example http.createServer(nodeHandler(receiver)).listen(3000)
 */
export function nodeHandler(
  receiver: Receiver,
  options: NodeHandlerOptions = {},
): (request: IncomingMessage, response: ServerResponse) => Promise<void> {
  const maxBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  return async (request, response) => {
    try {
      if (request.method !== 'POST') {
        sendAnswer(response, answer(405, 'method_not_allowed', 'webhooks are POSTed', { allow: 'POST' }));
        return;
      }
      const body = await readRawBody(request, maxBytes);
      sendAnswer(response, Buffer.isBuffer(body) ? await receiver.handle({ headers: request.headers, body }) : body);
    } catch {
      // The request stream failed (the sender went away): nothing to answer.
      response.destroy();
    }
  };
}
