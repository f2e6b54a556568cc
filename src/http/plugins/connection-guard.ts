import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { LineSampler } from './line-sampler.ts';
import type { PipelineStats } from './pipeline-gate.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** The API's connection figures ({@link guardConnections}). */
    connectionStats(): ConnectionStats;
  }
}

/** What {@link guardConnections} reports (for tests and figures). */
export interface ConnectionStats {
  /** Connections open now. */
  readonly open: number;
  /** Most connections open at once since start. */
  readonly peak: number;
  /** Connections closed to make room: they had not sent a request, or were idle between requests. */
  readonly evicted: number;
  /** New connections closed at once because every open one had a request in progress. */
  readonly refused: number;
  /** Pipelined requests per connection: the most running and waiting at once, and connections closed. */
  readonly pipeline: PipelineStats;
}

/**
 * Caps the open API connections of this process at `maxConnections` (TIDINGS_API_MAX_CONNECTIONS), so
 * slow or idle clients cannot take the process to its file-descriptor limit and starve the dispatcher's
 * sockets and database connections. At the cap a new connection is let in by closing the oldest one that
 * has not sent a whole request head yet (a slow or silent client: a legitimate one sends its headers at
 * once), else the oldest one idle between keep-alive requests; when every connection has a request in
 * progress the new one is closed at once. A connection with a request in progress is never closed here
 * (TIDINGS_API_REQUEST_TIMEOUT bounds it). Node's own `server.maxConnections` would refuse the newcomer
 * instead, so a few hundred silent sockets would lock everyone else out.
 * @returns a function that reads the current {@link ConnectionStats} (but the pipeline's)
 */
export function guardConnections(
  server: Server,
  maxConnections: number,
  sampler: LineSampler,
  log: (obj: object, msg: string) => void,
): () => Omit<ConnectionStats, 'pipeline'> {
  // Insertion-ordered sets: the first element is the oldest. A socket is in at most one of them.
  const fresh = new Set<Socket>();
  const idle = new Set<Socket>();
  // Counted as open until closed or evicted (an evicted socket's 'close' comes later: it is not counted twice).
  const counted = new Set<Socket>();
  let open = 0;
  let peak = 0;
  let evicted = 0;
  let refused = 0;

  server.on('connection', (socket: Socket) => {
    if (open >= maxConnections) {
      const victim = fresh.values().next().value ?? idle.values().next().value;
      if (victim === undefined) {
        refused++;
        if (sampler.take())
          log(
            { open, maxConnections },
            'connection refused: TIDINGS_API_MAX_CONNECTIONS reached, every connection busy',
          );
        socket.destroy();
        return;
      }
      evicted++;
      if (sampler.take())
        log(
          { open, maxConnections, neverSentRequest: fresh.has(victim) },
          'connection evicted: TIDINGS_API_MAX_CONNECTIONS reached',
        );
      fresh.delete(victim);
      idle.delete(victim);
      if (counted.delete(victim)) open--;
      victim.destroy();
    }
    open++;
    peak = Math.max(peak, open);
    counted.add(socket);
    fresh.add(socket);
    socket.once('close', () => {
      if (counted.delete(socket)) open--;
      fresh.delete(socket);
      idle.delete(socket);
    });
  });

  const busy = (req: IncomingMessage, res: ServerResponse): void => {
    const socket = req.socket;
    fresh.delete(socket);
    idle.delete(socket);
    res.once('finish', () => {
      if (!socket.destroyed) idle.add(socket);
    });
  };
  server.on('request', busy);
  return () => ({ open, peak, evicted, refused });
}

/**
 * `Expect: 100-continue` (RFC 9110 §10.1.1) is answered only after authentication: Node would send
 * `100 Continue` before any hook runs, inviting the body of a caller it then refuses. Here the request goes
 * through the usual hooks, and `100 Continue` is written once it is authenticated and its body is about to
 * be read (`preParsing`); a refused request is answered with its error and no body is ever asked for.
 */
export function continueAfterAuthentication(app: FastifyInstance): void {
  app.server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => app.server.emit('request', req, res));
  app.addHook('preParsing', async (request, reply, payload) => {
    if (request.headers.expect?.toLowerCase() === '100-continue' && !reply.raw.headersSent) reply.raw.writeContinue();
    return payload;
  });
}
