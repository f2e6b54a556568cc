/**
 * A small RESP2 client over `node:net`, shaped like Bun's built-in `RedisClient` (`connect`, `connected`,
 * `send(command, args)`, `duplicate`, `close`, `onconnect` / `onclose` / `onerror`), so that BullMQ's
 * structural driver detection wraps it with its own Bun adapter. The peer benchmark uses it because
 * neither `ioredis` nor `redis` is among the project's dependencies; with one of them installed, pass that
 * client instead (BullMQ detects either).
 *
 * Replies: simple and bulk strings as UTF-8 strings, integers as numbers, nil as null, arrays as arrays,
 * error replies as rejected `Error`s. Commands are pipelined in order on one socket.
 */
import { Socket } from 'node:net';

/** Where the client connects; `db` is selected before `onconnect` fires. */
export interface RespTarget {
  readonly host: string;
  readonly port: number;
  readonly db: number;
}

/** One reply value (RESP2). */
export type RespValue = string | number | null | RespValue[];

type Pending = { resolve: (v: RespValue) => void; reject: (e: Error) => void };

/** Result of parsing from `offset`: the value and the offset after it, or null when more bytes are needed. */
type Parsed = { value: RespValue | Error; end: number } | null;

function parse(buf: Buffer, offset: number): Parsed {
  if (offset >= buf.length) return null;
  const lineEnd = buf.indexOf('\r\n', offset);
  if (lineEnd < 0) return null;
  const type = buf[offset];
  const line = buf.toString('utf8', offset + 1, lineEnd);
  const next = lineEnd + 2;
  switch (type) {
    case 0x2b: return { value: line, end: next }; // +
    case 0x2d: return { value: new Error(line), end: next }; // -
    case 0x3a: return { value: Number(line), end: next }; // :
    case 0x24: { // $
      const len = Number(line);
      if (len < 0) return { value: null, end: next };
      if (buf.length < next + len + 2) return null;
      return { value: buf.toString('utf8', next, next + len), end: next + len + 2 };
    }
    case 0x2a: { // *
      const count = Number(line);
      if (count < 0) return { value: null, end: next };
      const items: RespValue[] = [];
      let at = next;
      for (let i = 0; i < count; i += 1) {
        const item = parse(buf, at);
        if (item === null) return null;
        // An error inside an array (EXEC) is kept as a value for the caller, as Bun does.
        items.push(item.value instanceof Error ? (item.value.message as RespValue) : item.value);
        at = item.end;
      }
      return { value: items, end: at };
    }
    default:
      throw new Error(`unexpected RESP type byte ${type}`);
  }
}

function encode(command: string, args: readonly unknown[]): Buffer {
  const parts: Buffer[] = [Buffer.from(`*${args.length + 1}\r\n$${Buffer.byteLength(command)}\r\n${command}\r\n`)];
  for (const a of args) {
    const b = Buffer.isBuffer(a) ? a : a instanceof Uint8Array ? Buffer.from(a) : Buffer.from(String(a), 'utf8');
    parts.push(Buffer.from(`$${b.length}\r\n`), b, Buffer.from('\r\n'));
  }
  return Buffer.concat(parts);
}

/** The client; see the file comment. */
export class RespClient {
  readonly target: RespTarget;
  connected = false;
  onconnect: (() => void) | undefined = undefined;
  onclose: ((error?: Error) => void) | undefined = undefined;
  onerror: ((error: Error) => void) | undefined = undefined;
  #socket: Socket | null = null;
  #pending: Pending[] = [];
  #buffer: Buffer = Buffer.alloc(0);
  #connecting: Promise<void> | null = null;

  constructor(target: RespTarget) {
    this.target = target;
  }

  /** Connects and selects the database; resolves once `onconnect` has been called. */
  connect(): Promise<void> {
    if (this.connected) return Promise.resolve();
    this.#connecting ??= new Promise<void>((resolve, reject) => {
      const socket = new Socket();
      socket.setNoDelay(true);
      this.#socket = socket;
      socket.on('data', (chunk: Buffer) => this.#onData(chunk));
      socket.once('error', (error) => {
        this.onerror?.(error);
        if (!this.connected) reject(error);
      });
      socket.once('close', () => {
        const wasConnected = this.connected;
        this.connected = false;
        this.#connecting = null;
        for (const p of this.#pending.splice(0)) p.reject(new Error('Connection closed'));
        if (wasConnected) this.onclose?.();
      });
      socket.connect(this.target.port, this.target.host, () => {
        this.connected = true;
        this.#raw('SELECT', [this.target.db]).then(() => {
          this.onconnect?.();
          resolve();
        }, reject);
      });
    });
    return this.#connecting;
  }

  /** Sends one command; rejects with the server's error reply, or when the connection closes first. */
  send(command: string, args: readonly unknown[]): Promise<RespValue> {
    if (!this.connected || this.#socket === null) return Promise.reject(new Error('Connection is closed.'));
    return this.#raw(command, args);
  }

  #raw(command: string, args: readonly unknown[]): Promise<RespValue> {
    return new Promise((resolve, reject) => {
      this.#pending.push({ resolve, reject });
      this.#socket!.write(encode(command, args));
    });
  }

  #onData(chunk: Buffer): void {
    this.#buffer = this.#buffer.length === 0 ? chunk : Buffer.concat([this.#buffer, chunk]);
    let offset = 0;
    for (;;) {
      const parsed = parse(this.#buffer, offset);
      if (parsed === null) break;
      offset = parsed.end;
      const p = this.#pending.shift();
      if (p === undefined) continue;
      if (parsed.value instanceof Error) p.reject(parsed.value);
      else p.resolve(parsed.value);
    }
    this.#buffer = offset >= this.#buffer.length ? Buffer.alloc(0) : this.#buffer.subarray(offset);
  }

  /**
   * A new, unconnected client for the same server and database. Synchronous (as ioredis' is): BullMQ
   * duplicates a caller's client before wrapping it, and awaits the result where it expects Bun's promise.
   */
  duplicate(): RespClient {
    return new RespClient(this.target);
  }

  /** Closes the socket (pending commands are rejected). */
  close(): void {
    this.#socket?.destroy();
  }

  /** The same as {@link close} (BullMQ recognises a client instance by `connect`, `disconnect`, `duplicate`). */
  disconnect(): void {
    this.close();
  }
}

/** Parses `redis://host:port/db` into a target. @throws Error for another scheme */
export function respTarget(url: string): RespTarget {
  const u = new URL(url);
  if (u.protocol !== 'redis:') throw new Error(`--redis-url must be a redis:// URL, not "${url}"`);
  const db = u.pathname.length > 1 ? Number(u.pathname.slice(1)) : 0;
  if (!Number.isInteger(db) || db < 0) throw new Error(`--redis-url: bad database index in "${url}"`);
  return { host: u.hostname || '127.0.0.1', port: u.port === '' ? 6379 : Number(u.port), db };
}
