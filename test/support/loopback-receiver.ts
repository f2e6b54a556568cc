import { once } from 'node:events';
import { createServer, type Socket } from 'node:net';

/**
 * Raw TCP receivers on loopback for the outbound-hardening tests (docs/design.md#security): a receiver that reads each
 * HTTP/1.1 request and hands the socket to a scripted behaviour, a canary that must never be reached, and
 * a raw listener. Nothing here listens on anything outside 127.0.0.0/8 and ::1.
 */

/**
 * What a receiver does with one connection once a whole request has arrived. `context.written` counts
 * response bytes where a behaviour reports them; `context.next()` reads the next request on the connection.
 */
export type Behaviour = (socket: Socket, request: RecordedRequest, context: BehaviourContext) => void;

/** See {@link Behaviour}. */
export interface BehaviourContext {
  written: number;
  readonly next: () => void;
}

/** One request as the receiver read it. */
export interface RecordedRequest {
  readonly head: string;
  readonly body: Buffer;
}

/** A listening receiver and what it saw. */
export interface Receiver {
  readonly host: string;
  readonly port: number;
  /** `http://host:port/` (IPv6 hosts in brackets). */
  readonly url: string;
  /** TCP connections accepted. */
  readonly connections: () => number;
  /** Whole requests read. */
  readonly requests: () => readonly RecordedRequest[];
  /** Resolves once at least `count` whole requests have been read. */
  readonly whenRequests: (count: number) => Promise<void>;
  /** Response bytes the behaviour wrote (where it counts them, e.g. the 1 GB body). */
  readonly bytesWritten: () => number;
  close(): Promise<void>;
}

const MAX_HEAD_BYTES = 1024 * 1024;

/** Reads one HTTP/1.1 request (head + Content-Length body) from the socket, then calls `onRequest`. */
function readRequest(socket: Socket, onRequest: (request: RecordedRequest) => void): void {
  let buffered = Buffer.alloc(0);
  const onData = (chunk: Buffer): void => {
    buffered = Buffer.concat([buffered, chunk]);
    const end = buffered.indexOf('\r\n\r\n');
    if (end === -1) {
      if (buffered.length > MAX_HEAD_BYTES) socket.destroy();
      return;
    }
    const head = buffered.subarray(0, end).toString('latin1');
    const length = Number(/\r\ncontent-length:\s*(\d+)/i.exec(head)?.[1] ?? '0');
    if (buffered.length < end + 4 + length) return;
    socket.off('data', onData);
    onRequest({ head, body: Buffer.from(buffered.subarray(end + 4, end + 4 + length)) });
  };
  socket.on('data', onData);
}

/** Extra parts a specific receiver reports; the raw listener reports none. */
interface Extras {
  readonly requests: () => readonly RecordedRequest[];
  readonly whenRequests: (count: number) => Promise<void>;
  readonly bytesWritten: () => number;
}

const NO_EXTRAS: Extras = {
  requests: () => [],
  whenRequests: () => new Promise<void>(() => undefined),
  bytesWritten: () => 0,
};

/**
 * Starts a TCP listener on `host:port` (port 0 = any free port) that counts connections and hands each one
 * to `onConnection`. Rejects when the address cannot be bound (e.g. no IPv6 loopback). Open sockets are
 * destroyed on close.
 */
export async function startRawReceiver(
  host: string,
  port: number,
  onConnection: (socket: Socket) => void,
  extras: Extras = NO_EXTRAS,
): Promise<Receiver> {
  const sockets = new Set<Socket>();
  let connections = 0;
  const server = createServer((socket) => {
    connections += 1;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    onConnection(socket);
  });
  server.listen(port, host);
  await Promise.race([
    once(server, 'listening'),
    once(server, 'error').then(([error]) => Promise.reject(error as Error)),
  ]);
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no TCP address');
  const urlHost = host.includes(':') ? `[${host}]` : host;
  return {
    host,
    port: address.port,
    url: `http://${urlHost}:${address.port}/`,
    connections: () => connections,
    ...extras,
    async close() {
      for (const socket of sockets) socket.destroy();
      server.close();
      await once(server, 'close');
    },
  };
}

/**
 * Starts a receiver on `host` (default 127.0.0.1) and `port` (default any free port) that reads each
 * request, records it, and hands the socket to `behaviour`.
 */
export function startReceiver(behaviour: Behaviour, host = '127.0.0.1', port = 0): Promise<Receiver> {
  const seen: RecordedRequest[] = [];
  const waiters: { readonly count: number; readonly resolve: () => void }[] = [];
  let written = 0;
  const onConnection = (socket: Socket): void => {
    const serve = (): void =>
      readRequest(socket, (request) => {
        seen.push(request);
        for (const waiter of waiters.filter((w) => w.count <= seen.length)) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.resolve();
        }
        const context: BehaviourContext = {
          get written() {
            return written;
          },
          set written(value: number) {
            written = value;
          },
          next: serve,
        };
        behaviour(socket, request, context);
      });
    serve();
  };
  return startRawReceiver(host, port, onConnection, {
    requests: () => seen,
    whenRequests(count) {
      if (seen.length >= count) return Promise.resolve();
      const { promise, resolve } = Promise.withResolvers<void>();
      waiters.push({ count, resolve });
      return promise;
    },
    bytesWritten: () => written,
  });
}

/**
 * A canary: a listener that must never be reached. It counts every connection and closes it at once,
 * without reading or answering. Rejects when `host:port` cannot be bound.
 */
export function startCanary(host: string, port: number): Promise<Receiver> {
  return startRawReceiver(host, port, (socket) => socket.destroy());
}

/**
 * A plain-HTTP listener that answers `400 Bad Request` to whatever bytes arrive first (a TLS ClientHello
 * included) and closes: what an https URL pointing at an http port meets.
 */
export function startPlainHttpResponder(host = '127.0.0.1'): Promise<Receiver> {
  return startRawReceiver(host, 0, (socket) => {
    socket.once('data', () => socket.end('HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n'));
  });
}
