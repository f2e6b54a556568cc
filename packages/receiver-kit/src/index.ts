/**
 * @tidings/receiver: receive Standard Webhooks exactly once. `createReceiver` checks the signature and the
 * timestamp and runs the handler once per `webhook-id` through a store (`memoryStore` here; PostgreSQL in
 * `@tidings/receiver/postgres`, Redis in `@tidings/receiver/redis`); the framework adapters are in
 * `@tidings/receiver/node`, `/express` and `/fastify`.
 */
export { answer, createReceiver } from './receiver.ts';
export type { ReceivedRequest, Receiver, ReceiverAnswer, ReceiverOptions, WebhookEvent } from './receiver.ts';
export { DEFAULT_LEASE_MS, DEFAULT_TTL_MS } from './store.ts';
export type { ReceiptOutcome, ReceiptStore } from './store.ts';
export { createVerifier, DEFAULT_TOLERANCE_SECONDS, MAX_TOLERANCE_SECONDS } from './verify.ts';
export type { IncomingHeaders, Refused, Verified, Verifier, VerifierOptions } from './verify.ts';
export { memoryStore } from './stores/memory.ts';
export type { MemoryStore, MemoryStoreOptions } from './stores/memory.ts';
