import type { FastifyInstance } from 'fastify';
import type { Config } from '../../config/config.ts';
import { FairQueue } from '../fair-queue.ts';
import { whenAnswered } from './pipeline-gate.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** Requests running and waiting in the fair admission queue ({@link installFairAdmission}; zeros when off). */
    fairAdmissionStats(): { readonly running: number; readonly waiting: number };
  }
}

/** The error code of a request whose client left while it waited (a client abort, logged as one). */
const GONE = 'ERR_STREAM_PREMATURE_CLOSE';

/**
 * Fair admission between credentials (ADR 0027, {@link FairQueue}): at most TIDINGS_API_FAIR_SLOTS requests with
 * a credential run their handlers at once, apart from each credential's first; the others wait, one FIFO queue
 * per credential, served in turn. A request is admitted once its body was read and checked (a `preHandler`
 * hook: a slow body holds no slot) and holds its slot until its answer is built (`onSend`), its response closes
 * or its connection closes, so a client slow to read its answer holds no slot either. Requests without a
 * credential (health, metrics, the web pages) are not queued: they have their own per-address rate.
 * Its counts are `app.fairAdmissionStats()`.
 */
export function installFairAdmission(app: FastifyInstance, config: Pick<Config, 'apiFairSlots'>): void {
  const queue = config.apiFairSlots === 0 ? null : new FairQueue(config.apiFairSlots);
  app.decorate('fairAdmissionStats', () => ({ running: queue?.running ?? 0, waiting: queue?.waiting ?? 0 }));
  if (queue === null) return;
  const releases = new WeakMap<object, () => void>();
  app.addHook('preHandler', (request, reply, done) => {
    if (request.principal === null || request.tokenHash === null) return done();
    const key = request.tokenHash.toString('base64url');
    let admitted = false;
    let ended = false;
    let queued = false;
    const release = (): void => {
      if (ended) return;
      ended = true;
      if (admitted) return queue.release(key);
      // The connection closed while the request waited: it leaves the queue and is not run.
      place?.cancel();
      done(Object.assign(new Error('client closed the connection while its request waited'), { code: GONE }));
    };
    const place = queue.enter(key, () => {
      admitted = true;
      if (queued) done();
    });
    queued = place !== null;
    releases.set(request, release);
    whenAnswered(request.raw, reply.raw, release);
    if (place === null) done();
  });
  app.addHook('onSend', async (request, _reply, payload) => {
    releases.get(request)?.();
    return payload;
  });
}
