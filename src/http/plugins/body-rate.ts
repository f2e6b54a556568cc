import { Transform, type TransformCallback } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../../config/config.ts';
import { AppError } from '../../domain/errors.ts';

/**
 * A minimum rate for request bodies (TIDINGS_API_MIN_BODY_RATE after TIDINGS_API_BODY_RATE_GRACE), the
 * rule of Apache's mod_reqtimeout `MinRate`: by `grace + received / rate` after the body began, the body must
 * have ended, else the request is answered 408 `request_timeout` and its connection closed. A body trickled a
 * few bytes a second is cut after the grace instead of holding its connection (and its credential's slot)
 * for the whole TIDINGS_API_REQUEST_TIMEOUT. Runs at `preParsing`, after authentication; a body that has
 * already arrived whole (the usual case: headers and a small body in one read) is not watched at all.
 */
export function installBodyRate(
  app: FastifyInstance,
  config: Pick<Config, 'apiMinBodyRate' | 'apiBodyRateGraceMs'>,
  nowMs: () => number = () => performance.now(),
): void {
  const rate = config.apiMinBodyRate;
  if (rate === 0) return;
  const graceMs = config.apiBodyRateGraceMs;
  app.addHook('preParsing', async (request, reply, payload) => {
    const raw = request.raw;
    if (raw.complete) return payload;
    const started = nowMs();
    let received = 0;
    let timer: NodeJS.Timeout | undefined;
    const counted = new Transform({
      transform(chunk: Buffer, _encoding, done: TransformCallback) {
        received += chunk.length;
        done(null, chunk);
      },
    });
    // Fastify listens on `counted` only while it reads the body; an error after that (a refusal answered
    // before reading, as a 413 on Content-Length) must not be an unhandled 'error' event.
    counted.on('error', () => undefined);
    const stop = (): void => clearTimeout(timer);
    const check = (): void => {
      if (raw.complete || counted.destroyed || reply.sent) return;
      const deadline = started + graceMs + (received / rate) * 1000;
      const now = nowMs();
      if (now < deadline) {
        timer = setTimeout(check, Math.max(1, Math.ceil(deadline - now)));
        return;
      }
      // The rest of the body is never read: the answer closes the connection.
      payload.unpipe(counted);
      reply.header('connection', 'close');
      const setting = `TIDINGS_API_MIN_BODY_RATE (${rate} bytes/s after TIDINGS_API_BODY_RATE_GRACE ${graceMs} ms)`;
      const seen = `${received} bytes in ${Math.round(now - started)} ms`;
      counted.destroy(new AppError('request_timeout', `The request body arrived slower than ${setting}: ${seen}`));
    };
    timer = setTimeout(check, Math.max(1, graceMs));
    counted.once('close', stop);
    payload.once('end', stop);
    // Answered (or its connection gone) before the body arrived: nothing is left to watch.
    reply.raw.once('close', () => {
      stop();
      payload.unpipe(counted);
      counted.destroy();
    });
    // An aborted upload reaches the parser as an error of the stream it reads.
    payload.once('error', (error) => counted.destroy(error));
    payload.once('aborted', () => counted.destroy(Object.assign(new Error('aborted'), { code: 'ECONNRESET' })));
    payload.pipe(counted);
    return counted;
  });
}
