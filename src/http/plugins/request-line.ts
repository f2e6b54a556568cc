import { redactUrl } from './edge-errors.ts';

/** The one log line of a completed API request (see `OneLineLogController` in src/http/app.ts). */
export interface RequestLine {
  readonly reqId: string;
  readonly req: { readonly method: string; readonly url: string };
  readonly res: { readonly statusCode: number };
  /** Milliseconds from the request's arrival to the end of the answer. */
  readonly responseTime: number;
}

/**
 * The fields of the line written when an API request completes without an error: ids, the method, the url
 * with credentials in its query string redacted (`redactUrl`), the status and the duration — nothing that
 * can hold a credential, so it is written without pino's redaction pass (docs/adr/0016-hot-path-cost.md).
 * Headers, bodies and errors never go into it; the errored line keeps the redacting logger.
 */
export function requestLine(
  request: { readonly id: string; readonly method: string; readonly url: string },
  reply: { readonly statusCode: number; readonly elapsedTime: number },
): RequestLine {
  return {
    reqId: request.id,
    req: { method: request.method, url: redactUrl(request.url) },
    res: { statusCode: reply.statusCode },
    responseTime: reply.elapsedTime,
  };
}
