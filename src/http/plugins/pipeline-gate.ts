import { createServer, type IncomingMessage, type Server, type ServerOptions, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyServerFactory } from 'fastify';

/** What {@link pipelineGate} reports (for tests and figures). */
export interface PipelineStats {
  /** Most requests of one connection that were running at once since start (at most the depth). */
  readonly peakRunning: number;
  /** Most requests of one connection that waited at once since start (at most the queue). */
  readonly peakWaiting: number;
  /** Connections closed because more requests waited than the queue holds. */
  readonly closed: number;
}

/** The limits of {@link pipelineGate}: TIDINGS_API_PIPELINE_DEPTH and TIDINGS_API_PIPELINE_QUEUE. */
export interface PipelineLimits {
  readonly depth: number;
  readonly queue: number;
  /** Called (sampled by the caller) when a connection is closed for writing too far ahead. */
  readonly onClose?: (figures: { readonly depth: number; readonly queue: number }) => void;
}

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/** One connection's requests: those running (handed to the handler) and those waiting their turn. */
interface Lane {
  running: number;
  readonly waiting: [IncomingMessage, ServerResponse][];
}

/** Per connection: the callbacks of {@link whenAnswered} still waiting, run when it closes (one listener each). */
const waitingOnClose = new WeakMap<Socket, Set<() => void>>();

/**
 * Calls `fn` once, when the answer of `req` is done with: its response closed (after it was written, or
 * aborted), or its connection closed (a response still queued behind an unread one gets no event of its own),
 * or at once when the connection had already been destroyed. One `close` listener per connection, whatever
 * the number of requests and limits waiting on it.
 */
export function whenAnswered(req: IncomingMessage, res: ServerResponse, fn: () => void): void {
  const socket = req.socket;
  let callbacks = waitingOnClose.get(socket);
  if (callbacks === undefined) {
    const set = new Set<() => void>();
    callbacks = set;
    waitingOnClose.set(socket, set);
    socket.once('close', () => {
      waitingOnClose.delete(socket);
      for (const callback of set) callback();
    });
  }
  const waiting = callbacks;
  const once = (): void => {
    if (!waiting.delete(once)) return;
    fn();
  };
  waiting.add(once);
  res.once('close', once);
  if (socket.destroyed) queueMicrotask(once);
}

/**
 * Bounds the answers one connection can make the server hold (ADR 0019). Node parses every request an
 * HTTP/1.1 client pipelines and hands each to the handler at once; answers are written in order, so
 * behind one answer the client does not read, every later answer is built and kept in memory (1,000
 * pipelined requests for a 170 KB document: 170 MB per connection). Here at most `depth` requests of a
 * connection run at once — a request counts until its answer was written to the socket or the connection
 * closed — and later ones wait, in order, without running; a connection with more than `queue` waiting
 * (a client writing far ahead of reading) is closed. Node's own back-pressure (it stops reading a
 * connection whose unsent answers pass the socket's high-water mark) does the rest.
 * @returns the gated handler and a function that reads the {@link PipelineStats}
 */
export function pipelineGate(
  handler: Handler,
  limits: PipelineLimits,
): {
  readonly handler: Handler;
  readonly stats: () => PipelineStats;
} {
  const lanes = new WeakMap<Socket, Lane>();
  let peakRunning = 0;
  let peakWaiting = 0;
  let closed = 0;

  const run = (lane: Lane, req: IncomingMessage, res: ServerResponse): void => {
    lane.running++;
    peakRunning = Math.max(peakRunning, lane.running);
    whenAnswered(req, res, () => {
      lane.running--;
      const next = lane.waiting.shift();
      if (next !== undefined && !req.socket.destroyed) run(lane, next[0], next[1]);
    });
    handler(req, res);
  };

  const gated: Handler = (req, res) => {
    const socket = req.socket;
    // Requests Node had already parsed from the connection's last read after it was closed here.
    if (socket.destroyed) return;
    let lane = lanes.get(socket);
    if (lane === undefined) {
      lane = { running: 0, waiting: [] };
      lanes.set(socket, lane);
      const closing = lane;
      socket.once('close', () => {
        closing.waiting.length = 0;
      });
    }
    if (lane.running < limits.depth) {
      run(lane, req, res);
      return;
    }
    if (lane.waiting.length >= limits.queue) {
      closed++;
      lane.waiting.length = 0;
      limits.onClose?.({ depth: limits.depth, queue: limits.queue });
      socket.destroy();
      return;
    }
    lane.waiting.push([req, res]);
    peakWaiting = Math.max(peakWaiting, lane.waiting.length);
  };
  return { handler: gated, stats: () => ({ peakRunning, peakWaiting, closed }) };
}

/** Fastify's server options that {@link gatedServerFactory} applies to the server it makes. */
interface ServerTimeouts {
  readonly http?: ServerOptions;
  readonly keepAliveTimeout?: number;
  readonly requestTimeout?: number;
  readonly connectionTimeout?: number;
}

/**
 * Fastify's `serverFactory` for an HTTP/1.1 server whose requests pass through {@link pipelineGate} before
 * Fastify sees them. It applies what Fastify applies to a server it makes itself (the `http` options, the
 * keep-alive, request and socket timeouts). `onStats` receives the gate's figures reader.
 */
export function gatedServerFactory(
  limits: PipelineLimits,
  onStats: (stats: () => PipelineStats) => void,
): FastifyServerFactory {
  return (fastifyHandler, options) => {
    const timeouts = options as ServerTimeouts;
    const gate = pipelineGate(fastifyHandler as Handler, limits);
    onStats(gate.stats);
    const server: Server = createServer(timeouts.http ?? {}, gate.handler);
    if (timeouts.keepAliveTimeout !== undefined) server.keepAliveTimeout = timeouts.keepAliveTimeout;
    if (timeouts.requestTimeout !== undefined) server.requestTimeout = timeouts.requestTimeout;
    if (timeouts.connectionTimeout !== undefined) server.setTimeout(timeouts.connectionTimeout);
    return server;
  };
}
