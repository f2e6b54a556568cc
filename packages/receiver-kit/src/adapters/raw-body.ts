import type { IncomingMessage, ServerResponse } from 'node:http';
import { answer, type ReceiverAnswer } from '../receiver.ts';

/** Default largest request body the adapters read, bytes (1 MiB, Tidings' default TIDINGS_MAX_BODY_BYTES). */
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

/** The body bytes, or the 413 answer when they pass `maxBytes` (nothing more is read then). */
export async function readRawBody(request: IncomingMessage, maxBytes: number): Promise<Buffer | ReceiverAnswer> {
  // The rest of the body is not read: the connection is closed after the answer.
  const tooLarge = (): ReceiverAnswer =>
    answer(413, 'payload_too_large', `the body is larger than ${maxBytes} bytes`, { connection: 'close' });
  const declared = Number(request.headers['content-length'] ?? 0);
  if (declared > maxBytes) return tooLarge();
  const chunks: Buffer[] = [];
  let length = 0;
  for await (const chunk of request as AsyncIterable<Buffer | string>) {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    length += bytes.length;
    if (length > maxBytes) return tooLarge();
    chunks.push(bytes);
  }
  return Buffer.concat(chunks, length);
}

/** Writes an answer on a node:http response. */
export function sendAnswer(response: ServerResponse, result: ReceiverAnswer): void {
  response.writeHead(result.status, result.headers);
  response.end(result.body);
}
