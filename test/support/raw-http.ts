import { connect, type Socket } from 'node:net';

/** What a raw exchange saw: every byte the server sent, and whether (and when) the server closed. */
export interface RawExchange {
  /** Everything received, as latin1 text. */
  readonly text: string;
  /** The final status (after any 1xx), or null when no response arrived. */
  readonly status: number | null;
  /** The JSON body of the final response, or undefined when it has none or it is not JSON. */
  readonly body: unknown;
  /**
   * Milliseconds from the first write until the server closed the connection, or null when it had not within the
   * timeout.
   */
  readonly closedAfterMs: number | null;
}

/** Opens a TCP connection to `127.0.0.1:port` and resolves once it is connected. */
export function openSocket(port: number, localAddress?: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: '127.0.0.1', ...(localAddress === undefined ? {} : { localAddress }) });
    socket.once('connect', () => resolve(socket));
    socket.once('error', reject);
  });
}

/** Splits received text into the final response's status and JSON body. */
export function parseResponse(text: string): { status: number | null; body: unknown } {
  const responses = text.split(/(?=HTTP\/1\.1 \d{3})/).filter((r) => r.startsWith('HTTP/1.1 '));
  const last = responses.filter((r) => !/^HTTP\/1\.1 1\d\d/.test(r)).at(-1);
  if (last === undefined) return { status: null, body: undefined };
  const status = Number(last.slice(9, 12));
  const at = last.indexOf('\r\n\r\n');
  const raw = at < 0 ? '' : Buffer.from(last.slice(at + 4), 'latin1').toString('utf8');
  try {
    return { status, body: raw === '' ? undefined : JSON.parse(raw) };
  } catch {
    return { status, body: undefined };
  }
}

/**
 * Writes `data` (or each chunk of it in turn, after `then(socket, received)` when given) on a fresh
 * connection to `url`'s port and collects the answer until the server closes or `timeoutMs` passes (then the
 * client closes). Event-driven: nothing sleeps.
 */
export async function rawExchange(
  url: string,
  data: string | Buffer,
  options: { timeoutMs?: number; then?: (socket: Socket, received: () => string) => void } = {},
): Promise<RawExchange> {
  const socket = await openSocket(Number(new URL(url).port));
  const timeoutMs = options.timeoutMs ?? 5000;
  return new Promise((resolve) => {
    let text = '';
    const started = performance.now();
    let closedAfterMs: number | null = null;
    const timer = setTimeout(() => socket.destroy(), timeoutMs);
    socket.on('data', (chunk) => {
      text += chunk.toString('latin1');
    });
    socket.on('error', () => undefined);
    socket.on('end', () => {
      closedAfterMs ??= performance.now() - started;
    });
    socket.on('close', () => {
      clearTimeout(timer);
      if (closedAfterMs === null && performance.now() - started < timeoutMs - 1)
        closedAfterMs = performance.now() - started;
      resolve({ text, ...parseResponse(text), closedAfterMs });
    });
    socket.write(data);
    options.then?.(socket, () => text);
  });
}
