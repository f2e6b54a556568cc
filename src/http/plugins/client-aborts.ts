import type { FastifyReply, FastifyRequest } from 'fastify';
import type { LineSampler } from './line-sampler.ts';

/** Error codes of a client that went away while its request was read or its answer written. */
const ABORT_CODES = new Set([
  'ECONNRESET',
  'EPIPE',
  'ECONNABORTED',
  'ERR_STREAM_PREMATURE_CLOSE',
  'ERR_STREAM_DESTROYED',
]);

/**
 * True when `error` says the client went away (closed or reset its connection) rather than that Tidings failed:
 * its code is one of a broken connection's, or the request's socket is gone.
 */
export function isClientAbort(error: unknown, request?: Pick<FastifyRequest, 'raw'>): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && ABORT_CODES.has(code)) return true;
  return request?.raw.socket?.destroyed === true;
}

/**
 * Logs a client that went away, at info and through `sampler` (TIDINGS_REFUSAL_LOG_RATE), without the error or its
 * stack: a client can abort as often as it connects, and nothing failed on Tidings' side. Lines past the rate are
 * counted in the sampler's summary line.
 */
export function logClientAbort(
  sampler: LineSampler,
  request: FastifyRequest,
  reply: FastifyReply,
  error: unknown,
  msg: string,
  url: string,
): void {
  if (!sampler.take()) return;
  const code = (error as { code?: unknown } | null)?.code;
  reply.log.info(
    {
      req: { method: request.method, url },
      res: { statusCode: reply.statusCode },
      responseTime: reply.elapsedTime,
      aborted: true,
      ...(typeof code === 'string' ? { code } : {}),
    },
    msg,
  );
}
