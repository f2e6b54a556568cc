import { once } from 'node:events';
import type { Socket } from 'node:net';
import { createGzip } from 'node:zlib';
import type { Behaviour } from './loopback-receiver.ts';

export {
  startCanary,
  startPlainHttpResponder,
  startReceiver,
  type Behaviour,
  type Receiver,
} from './loopback-receiver.ts';

/**
 * Behaviours for the receivers of loopback-receiver.ts (docs/design.md#security): answers to a webhook request the way
 * a slow, huge, broken or malicious receiver would, and healthy ones. Every loop is bounded and every timer
 * stops when the client goes away.
 */

const TICK_MS = 100;
const MAX_TICKS = 600; // a minute of dripping at most, whatever the client does

/** Repeats `step` every 100 ms until it returns false, the socket closes, or a minute has passed. */
function drip(socket: Socket, step: (tick: number) => boolean): void {
  let tick = 0;
  const timer = setInterval(() => {
    tick += 1;
    if (socket.destroyed || tick > MAX_TICKS || !step(tick)) clearInterval(timer);
  }, TICK_MS);
  socket.once('close', () => clearInterval(timer));
}

/** 200 with a small body, keep-alive; every further request on the connection is answered too. */
export const healthy: Behaviour = (socket, _request, { next }) => {
  socket.write('HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nok');
  next();
};

/**
 * A healthy receiver that takes `processingMs` to answer each request (a real receiver does some work),
 * so a sequential client sends at a steady, modest rate instead of a hot loop.
 */
export function healthyAfter(processingMs: number): Behaviour {
  return (socket, request, context) => {
    const timer = setTimeout(() => healthy(socket, request, context), processingMs);
    socket.once('close', () => clearTimeout(timer));
  };
}

/** 200 and `Connection: close`: every request needs a new connection (and so a new lookup). */
export const healthyClosing: Behaviour = (socket) => {
  socket.end('HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok');
};

/** Reads the request and never answers; the connection stays open. */
export const headersNeverSent: Behaviour = () => undefined;

/** Sends the status line, then one header byte every 100 ms, never finishing the header block. */
export const slowDripHeaders: Behaviour = (socket) => {
  socket.write('HTTP/1.1 200 OK\r\nX-Slow: ');
  drip(socket, () => socket.write('a'));
};

/** Sends complete headers announcing 100 000 bytes, then one body byte every 100 ms. */
export const slowDripBody: Behaviour = (socket) => {
  socket.write('HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n');
  drip(socket, () => socket.write('a'));
};

/** `HTTP/1.1 102 Processing` every 100 ms, never a final response. */
export const endless1xx: Behaviour = (socket) => {
  socket.write('HTTP/1.1 102 Processing\r\n\r\n');
  drip(socket, () => socket.write('HTTP/1.1 102 Processing\r\n\r\n'));
};

/** A 200 whose body runs until the connection closes; it sends a few bytes and never closes. */
export const neverClosing: Behaviour = (socket) => {
  socket.write('HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nConnection: keep-alive\r\n\r\nstill here');
};

const ONE_GIB = 1024 * 1024 * 1024;
const CHUNK = Buffer.alloc(64 * 1024, 'x');

/** A 200 announcing 1 GiB and streaming it in 64 KiB chunks, with backpressure; counts the bytes written. */
export const oneGigabyteBody: Behaviour = (socket, _request, context) => {
  socket.write(`HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: ${ONE_GIB}\r\n\r\n`);
  let sent = 0;
  const pump = (): void => {
    while (sent < ONE_GIB && !socket.destroyed) {
      sent += CHUNK.length;
      context.written += CHUNK.length;
      if (!socket.write(CHUNK)) {
        socket.once('drain', pump);
        return;
      }
    }
  };
  pump();
};

/**
 * A gzip stream of `inflatedBytes` zero bytes, built chunk by chunk (so building it costs no more memory
 * than its compressed size, about 1/1000 of the inflated size).
 */
export async function gzipBomb(inflatedBytes: number): Promise<Buffer> {
  const gzip = createGzip({ level: 9 });
  const parts: Buffer[] = [];
  gzip.on('data', (part: Buffer) => parts.push(part));
  const zeros = Buffer.alloc(1024 * 1024);
  for (let written = 0; written < inflatedBytes; written += zeros.length) {
    if (!gzip.write(zeros)) await once(gzip, 'drain');
  }
  gzip.end();
  await once(gzip, 'end');
  return Buffer.concat(parts);
}

/** A 200 with `Content-Encoding: gzip` and the given compressed body. */
export function compressionBomb(bomb: Buffer): Behaviour {
  return (socket) => {
    socket.write(
      `HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\nContent-Length: ` +
        `${bomb.length}\r\n\r\n`,
    );
    socket.write(bomb);
  };
}

/** A 200 whose header block is about 1 MiB (1024 headers of 1 KiB). */
export const hugeHeaders: Behaviour = (socket) => {
  const line = `X-Filler: ${'h'.repeat(1024)}\r\n`;
  socket.write('HTTP/1.1 200 OK\r\n');
  for (let i = 0; i < 1024 && !socket.destroyed; i += 1) socket.write(line);
  socket.write('Content-Length: 0\r\n\r\n');
};

/** Resets the connection (TCP RST) right after reading the request. */
export const resetBeforeStatus: Behaviour = (socket) => {
  socket.resetAndDestroy();
};

/** Closes the connection (FIN) right after reading the request, without a byte of response. */
export const closeBeforeStatus: Behaviour = (socket) => {
  socket.end();
};

/** Sends `200 OK` announcing 1000 bytes, 7 of them, then resets the connection. */
export const resetAfterStatus: Behaviour = (socket) => {
  socket.write('HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\npartial', () => socket.resetAndDestroy());
};

/** A 302 to `location` (default: the URL that was requested, i.e. a redirect loop). */
export function redirect(location?: string): Behaviour {
  return (socket, request, { next }) => {
    const path = /^POST (\S+)/.exec(request.head)?.[1] ?? '/';
    const host = /\r\nhost:\s*(\S+)/i.exec(request.head)?.[1] ?? '';
    const target = location ?? `http://${host}${path}`;
    socket.write(`HTTP/1.1 302 Found\r\nLocation: ${target}\r\nContent-Length: 0\r\n\r\n`);
    next();
  };
}

/** An HTML error page, served with status 200. */
export const htmlErrorPage200: Behaviour = (socket) => {
  const page =
    '<!doctype html><html><head><title>Error</title></head><body><h1>Something went wrong</h1><p>Please try ' +
    'again later.</p></body></html>';
  socket.end(
    `HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: ` +
      `${Buffer.byteLength(page)}\r\nConnection: close\r\n\r\n${page}`,
  );
};

/** 503 with `Retry-After: 120`. */
export const unavailableRetryAfter: Behaviour = (socket) => {
  socket.end(
    'HTTP/1.1 503 Service Unavailable\r\nRetry-After: 120\r\nContent-Length: 4\r\nConnection: close\r\n\r\nbusy',
  );
};

/** A status line that is not HTTP. */
export const malformedStatusLine: Behaviour = (socket) => {
  socket.end('HTTP/1.1 two hundred OK\r\n\r\n');
};

/** An unsolicited `100 Continue` (the request carried no `Expect`). */
export const unsolicitedContinue: Behaviour = (socket) => {
  socket.write('HTTP/1.1 100 Continue\r\n\r\n');
};
