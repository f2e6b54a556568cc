import type { ReceiptStore } from './store.ts';
import { createVerifier, headerValue, type IncomingHeaders, type VerifierOptions } from './verify.ts';

/** One verified webhook, as the handler gets it. */
export interface WebhookEvent {
  /** `webhook-id`: the message id, the same on every retry, resend and replay of one message. */
  readonly id: string;
  /** When this attempt was sent (`webhook-timestamp`). */
  readonly timestamp: Date;
  /** The body exactly as received and signed. */
  readonly body: Buffer;
  /** The request's `content-type`, if any. */
  readonly contentType: string | undefined;
  /** The body parsed as JSON when the content type is JSON (or absent); otherwise undefined (read `body`). */
  readonly payload: unknown;
  /** Every request header, as received. */
  readonly headers: IncomingHeaders;
}

/** The answer to send: status, headers and a JSON body `{ code, detail }`. */
export interface ReceiverAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/** One received request: its headers and its raw body bytes (never a re-serialized parse). */
export interface ReceivedRequest {
  readonly headers: IncomingHeaders;
  readonly body: Buffer;
}

/** Options of {@link createReceiver}. */
export interface ReceiverOptions<Tx> extends VerifierOptions {
  /** Where handled `webhook-id`s are remembered: `postgresStore`, `redisStore` or `memoryStore`. */
  readonly store: ReceiptStore<Tx>;
  /**
   * Runs once per message. With the PostgreSQL store it gets the transaction's client: what it writes through
   * that client commits with the claim, or not at all. Throwing asks the sender to retry (500).
   */
  readonly handler: (event: WebhookEvent, tx: Tx) => unknown;
  /** `Retry-After` (seconds) of the 503 answered when the store cannot be reached. Default 5. */
  readonly storeRetryAfterSeconds?: number;
  /** Called with each handler or store failure (the answer never carries it): log it here. */
  readonly onError?: (error: unknown, context: { readonly id: string; readonly stage: 'handler' | 'store' }) => void;
}

/** Turns requests into answers; the framework adapters (`/node`, `/express`, `/fastify`) call it. */
export interface Receiver {
  /** Never throws: every failure is an answer (see the answer policy in the package README). */
  handle(request: ReceivedRequest): Promise<ReceiverAnswer>;
}

/**
 * Creates a receiver with this answer policy:
 * - 400 / 401: missing or malformed signature headers, a stale or future timestamp, a bad signature, a JSON
 *   body that does not parse (the handler does not run);
 * - 200 `processed`: the handler ran and (with the PostgreSQL store) its transaction committed;
 * - 200 `duplicate`: this `webhook-id` was handled before; the handler does not run again;
 * - 409 `in_progress` with `Retry-After`: another request for this `webhook-id` is being handled right now;
 * - 500 `handler_failed`: the handler threw; its claim is given up, so the sender's retry runs it again;
 * - 503 `store_unavailable` with `Retry-After`: the store failed (nothing was committed).
 */
export function createReceiver<Tx>(options: ReceiverOptions<Tx>): Receiver {
  const verify = createVerifier(options);
  const storeRetryAfter = String(options.storeRetryAfterSeconds ?? 5);
  const report = options.onError ?? (() => undefined);
  return {
    async handle(request) {
      const verified = verify(request.headers, request.body);
      if (!verified.ok) return answer(verified.status, verified.code, verified.detail);
      const contentType = headerValue(request.headers, 'content-type');
      let payload: unknown;
      if (contentType === undefined || /[/+]json\b/i.test(contentType)) {
        try {
          payload = request.body.length === 0 ? undefined : JSON.parse(request.body.toString('utf8'));
        } catch {
          return answer(400, 'payload_invalid', 'the body is not valid JSON');
        }
      }
      const event: WebhookEvent = {
        id: verified.id,
        timestamp: new Date(verified.timestampSeconds * 1000),
        body: request.body,
        contentType,
        payload,
        headers: request.headers,
      };
      let handlerFailed = false;
      try {
        const outcome = await options.store.once(verified.id, async (tx) => {
          try {
            return await options.handler(event, tx);
          } catch (error) {
            handlerFailed = true;
            throw error;
          }
        });
        if (outcome.status === 'ran') return answer(200, 'processed', 'handled');
        if (outcome.status === 'done') return answer(200, 'duplicate', 'this webhook-id was handled before');
        return answer(409, 'in_progress', 'this webhook-id is being handled; retry later', {
          'retry-after': String(outcome.retryAfterSeconds),
        });
      } catch (error) {
        report(error, { id: verified.id, stage: handlerFailed ? 'handler' : 'store' });
        if (handlerFailed) return answer(500, 'handler_failed', 'the handler failed; retry');
        return answer(503, 'store_unavailable', 'the receipt store failed; retry', { 'retry-after': storeRetryAfter });
      }
    },
  };
}

/** A JSON answer `{ code, detail }`. */
export function answer(
  status: number,
  code: string,
  detail: string,
  headers: Record<string, string> = {},
): ReceiverAnswer {
  return {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8', ...headers },
    body: JSON.stringify({ code, detail }),
  };
}
