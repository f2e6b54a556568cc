/**
 * The benchmark receiver, run as a child process (started by receiver.ts with `process.execPath`).
 *
 * One minimal `node:http` server per requested port on 127.0.0.1, all sharing one handler: it stamps the
 * arrival of each request (the `request` event, i.e. once the request head is parsed; for these small
 * requests head and first byte arrive in the same read) on this machine's clock
 * (`performance.timeOrigin + performance.now()`, Unix ms with sub-ms resolution), keeps the first arrival
 * per `webhook-id`, counts duplicates, reads the body to its end, waits `delayMs`, and answers 200 with an
 * empty body. It verifies nothing: it is the same receiver for Tidings and for the raw-HTTP reference.
 *
 * Commands arrive over IPC (see {@link ReceiverCommand}); the process exits on `stop` or when the IPC
 * channel closes, so it never outlives the benchmark.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** Start-up settings, passed as JSON in argv[2]. */
export interface ReceiverInit {
  /** Delay before each answer, in ms (0, 100, 1000 in the scenarios). */
  readonly delayMs: number;
  /** How many ports to listen on (several when the per-origin socket cap would limit the in-flight count). */
  readonly ports: number;
}

/** Commands from the parent; each reply repeats the id. */
export type ReceiverCommand =
  | { readonly type: 'stats'; readonly id: number }
  | { readonly type: 'times'; readonly id: number }
  | { readonly type: 'reset'; readonly id: number }
  | { readonly type: 'stop'; readonly id: number };

/** Counters of the receiver since the last reset. Instants are Unix ms on this machine's clock. */
export interface ReceiverStats {
  /** Requests received (duplicates included). */
  readonly requests: number;
  /** Distinct deliveries seen (`webhook-id` at a path). */
  readonly unique: number;
  /** Requests whose `webhook-id` had been seen before at the same path (redeliveries). */
  readonly duplicates: number;
  /** Requests without a `webhook-id` header. */
  readonly withoutId: number;
  /** Answers sent. */
  readonly answered: number;
  /** Requests received but not answered yet (in flight at the receiver). */
  readonly open: number;
  /** Most requests open at once. */
  readonly maxOpen: number;
  /** Arrival of the first request, or null. */
  readonly firstAt: number | null;
  /** Arrival of the latest request of a new delivery, or null. */
  readonly lastNewAt: number | null;
  /** Open TCP connections now. */
  readonly connections: number;
}

/** Replies to the parent. */
export type ReceiverReply =
  | { readonly type: 'ready'; readonly ports: readonly number[] }
  | { readonly type: 'stats'; readonly id: number; readonly stats: ReceiverStats }
  | { readonly type: 'times'; readonly id: number; readonly ids: readonly string[]; readonly at: readonly number[] }
  | { readonly type: 'ack'; readonly id: number };

const nowMs = (): number => performance.timeOrigin + performance.now();

function reply(message: ReceiverReply): void {
  process.send?.(message);
}

async function main(): Promise<void> {
  if (process.send === undefined)
    throw new Error('receiver-process.ts must be started with an IPC channel (see receiver.ts)');
  const init = JSON.parse(process.argv[2] ?? '{}') as ReceiverInit;
  const delayMs = Math.max(0, init.delayMs ?? 0);
  let first = new Map<string, number>();
  let requests = 0;
  let duplicates = 0;
  let withoutId = 0;
  let answered = 0;
  let open = 0;
  let maxOpen = 0;
  let firstAt: number | null = null;
  let lastNewAt: number | null = null;
  const sockets = new Set<Socket>();
  const servers: Server[] = [];

  const handler = (req: IncomingMessage, res: ServerResponse): void => {
    const at = nowMs();
    requests += 1;
    open += 1;
    if (open > maxOpen) maxOpen = open;
    firstAt ??= at;
    const id = req.headers['webhook-id'];
    // One delivery = one message to one endpoint: the key is the webhook-id at the request path (a fan-out
    // sends one webhook-id to several endpoint paths).
    const key = typeof id === 'string' ? `${id}@${req.url ?? ''}` : null;
    if (key === null) withoutId += 1;
    else if (first.has(key)) duplicates += 1;
    else {
      first.set(key, at);
      lastNewAt = at;
    }
    const answer = (): void => {
      open -= 1;
      answered += 1;
      res.writeHead(200, { 'content-length': '0' });
      res.end();
    };
    req.on('data', () => undefined);
    req.on('end', () => {
      if (delayMs === 0) answer();
      else setTimeout(answer, delayMs);
    });
  };

  for (let i = 0; i < Math.max(1, init.ports ?? 1); i += 1) {
    const server = createServer({ keepAliveTimeout: 120_000, requestTimeout: 0, headersTimeout: 60_000 }, handler);
    server.on('connection', (socket: Socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    });
    server.maxRequestsPerSocket = 0;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    servers.push(server);
  }

  const stop = (): void => {
    for (const s of servers) s.close();
    for (const socket of sockets) socket.destroy();
    process.disconnect?.();
    setTimeout(() => process.exit(0), 200).unref();
  };

  process.on('message', (command: ReceiverCommand) => {
    switch (command.type) {
      case 'stats':
        reply({
          type: 'stats',
          id: command.id,
          stats: {
            requests,
            unique: first.size,
            duplicates,
            withoutId,
            answered,
            open,
            maxOpen,
            firstAt,
            lastNewAt,
            connections: sockets.size,
          },
        });
        break;
      case 'times':
        reply({ type: 'times', id: command.id, ids: [...first.keys()], at: [...first.values()] });
        break;
      case 'reset':
        first = new Map();
        requests = 0;
        duplicates = 0;
        withoutId = 0;
        answered = 0;
        maxOpen = open;
        firstAt = null;
        lastNewAt = null;
        reply({ type: 'ack', id: command.id });
        break;
      case 'stop':
        reply({ type: 'ack', id: command.id });
        stop();
        break;
    }
  });
  process.on('disconnect', stop);
  reply({ type: 'ready', ports: servers.map((s) => (s.address() as AddressInfo).port) });
}

if (import.meta.main) await main();
