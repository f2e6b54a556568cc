/**
 * A TCP proxy on 127.0.0.1 for fault injection (docs/guides/failure-table.md): it sits between Tidings and a database
 * (or a receiver) and can pass, stall or cut the traffic, for every connection at once.
 *
 * - `pass`: bytes flow both ways.
 * - `stall`: no byte moves in either direction; connections stay open (a frozen network path). New
 *   connections are accepted and held. Going back to `pass` delivers everything that waited, in order.
 * - `cut`: every open connection is reset (RST), and new ones are reset as soon as they arrive.
 */
import { connect, createServer, type Server, type Socket } from 'node:net';

/** What the proxy does with traffic. */
export type ProxyMode = 'pass' | 'stall' | 'cut';

/** A running proxy. */
export interface TcpProxy {
  /** The proxy's own port on 127.0.0.1 (point the client here). */
  readonly port: number;
  readonly mode: ProxyMode;
  /** Connections accepted since the start (including those reset at once in `cut`). */
  readonly accepted: number;
  /** Connections open now. */
  readonly open: number;
  /** Switches the mode; `cut` resets every open connection. */
  setMode(mode: ProxyMode): void;
  /** Stops listening and resets every connection. Idempotent. */
  close(): Promise<void>;
}

interface Pair {
  readonly client: Socket;
  readonly upstream: Socket;
}

/**
 * Starts a proxy on 127.0.0.1:0 to `target` (in `pass` mode).
 * @param target where connections go, e.g. `{ host: '127.0.0.1', port: 5432 }`.
 */
export async function startTcpProxy(target: { readonly host: string; readonly port: number }): Promise<TcpProxy> {
  const pairs = new Set<Pair>();
  let mode: ProxyMode = 'pass';
  let accepted = 0;
  let closed = false;

  /**
   * Ends `socket` with a reset (RST) when it is connected and open both ways, else with a plain destroy: a
   * reset of a socket still connecting or half-closed can leave its handle unclosed, and the process then
   * never exits.
   */
  const reset = (socket: Socket): void => {
    if (socket.destroyed) return;
    if (socket.connecting || socket.pending || socket.writableEnded || socket.readableEnded) {
      socket.destroy();
      return;
    }
    try {
      socket.resetAndDestroy();
    } catch {
      socket.destroy();
    }
  };

  /** Forwards `from` → `to`, honouring back-pressure; a stalled proxy keeps both paused. */
  const forward = (from: Socket, to: Socket): void => {
    from.on('data', (chunk: Buffer) => {
      if (!to.write(chunk)) from.pause();
    });
    to.on('drain', () => {
      if (mode === 'pass') from.resume();
    });
    from.on('end', () => to.end());
  };

  const server: Server = createServer({ pauseOnConnect: true }, (client) => {
    accepted += 1;
    if (mode === 'cut' || closed) {
      reset(client);
      return;
    }
    const upstream = connect({ host: target.host, port: target.port });
    upstream.pause();
    const pair: Pair = { client, upstream };
    pairs.add(pair);
    // One side closed or failed: close the other one too (plainly; only `cut` sends resets).
    const drop = (): void => {
      if (!pairs.delete(pair)) return;
      client.destroy();
      upstream.destroy();
    };
    client.on('error', drop);
    upstream.on('error', drop);
    client.on('close', drop);
    upstream.on('close', drop);
    forward(client, upstream);
    forward(upstream, client);
    if (mode === 'pass') {
      client.resume();
      upstream.resume();
    }
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('tcp proxy: no TCP address');

  return {
    port: address.port,
    get mode() {
      return mode;
    },
    get accepted() {
      return accepted;
    },
    get open() {
      return pairs.size;
    },
    setMode(next) {
      mode = next;
      for (const pair of [...pairs]) {
        if (next === 'cut') {
          pairs.delete(pair);
          reset(pair.client);
          reset(pair.upstream);
        } else if (next === 'stall') {
          pair.client.pause();
          pair.upstream.pause();
        } else {
          pair.client.resume();
          pair.upstream.resume();
        }
      }
    },
    async close() {
      if (closed) return;
      closed = true;
      for (const pair of [...pairs]) {
        pairs.delete(pair);
        reset(pair.client);
        reset(pair.upstream);
      }
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
