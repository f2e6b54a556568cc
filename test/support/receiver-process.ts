/**
 * The child process of the test receiver (see test-receiver.ts, which starts it with `process.execPath`).
 *
 * An HTTP server on 127.0.0.1:0 that verifies every request with the public `standardwebhooks` package,
 * records it, pushes the record to the parent over the IPC channel, and only then answers as the script
 * of the request's path says. Because the record is sent before the answer, a sender that has seen an
 * answer can count on the parent getting the record (IPC messages arrive in order).
 *
 * Runs until the parent sends `stop` or the IPC channel closes (the parent exited): it never outlives
 * the test process.
 */
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { Webhook } from 'standardwebhooks';

/**
 * How the receiver answers one request. Fields combine: `delayMs` first, then the answer. Defaults:
 * status 200, no extra headers, empty body.
 */
export interface ReceiverStep {
  /** HTTP status of the answer (default 200). */
  readonly status?: number;
  /** Extra response headers, e.g. `{ 'retry-after': '1' }` or `{ location: 'https://…' }`. */
  readonly headers?: Readonly<Record<string, string>>;
  /** Response body (UTF-8). */
  readonly body?: string;
  /** Instead of `body`: this many bytes of `x`, streamed in 64 KiB chunks (huge-body tests). */
  readonly bodyBytes?: number;
  /** Wait this long before answering, in ms. */
  readonly delayMs?: number;
  /** Never answer; the connection stays open until the client gives up or the receiver stops. */
  readonly stall?: boolean;
  /** Send the status line and headers, then never finish the body. */
  readonly stallAfterHeaders?: boolean;
  /** Close the connection without any answer. */
  readonly destroy?: boolean;
}

/** One request as the receiver saw it. Header names are lower case. Times are the receiver's wall clock. */
export interface ReceivedRequest {
  /** 1-based arrival order across all paths (reset by `reset()`). */
  readonly seq: number;
  readonly method: string;
  /** Path without the query string: the key of scripts and secrets. */
  readonly path: string;
  /** The request target as sent (path and query). */
  readonly target: string;
  readonly webhookId: string | null;
  readonly webhookTimestamp: string | null;
  readonly webhookSignature: string | null;
  /**
   * The verdict of `standardwebhooks` `Webhook.verify` (signature and the 300 s timestamp tolerance
   * against this machine's clock) with any of the path's secrets; null when the path has no secret.
   */
  readonly signatureValid: boolean | null;
  /**
   * True when a signature entry matches with one of the path's secrets, whatever the timestamp's age
   * (verified with the clock set to the request's own timestamp); null when the path has no secret.
   * Differs from `signatureValid` only for timestamps more than 300 s off (e.g. a sender on a test clock).
   */
  readonly signatureMatches: boolean | null;
  /** Why verification failed (the verifier's message), else null. */
  readonly verifyError: string | null;
  /** SHA-256 of the body bytes, lower-case hex. */
  readonly bodySha256: string;
  /** Body length in bytes. */
  readonly bodyBytes: number;
  /** The body decoded as UTF-8. */
  readonly body: string;
  readonly headers: Readonly<Record<string, string>>;
  /** When the request line arrived, Unix ms (receiver's wall clock). */
  readonly receivedAtMs: number;
  /** The script step the receiver answered with. */
  readonly answer: ReceiverStep;
}

/** Messages from the parent. Each carries an id that the `ack` reply repeats. */
export type ReceiverCommand =
  | {
      readonly type: 'script';
      readonly id: number;
      readonly path: string;
      readonly steps: readonly ReceiverStep[];
      readonly fallback: ReceiverStep | null;
    }
  | { readonly type: 'secret'; readonly id: number; readonly path: string; readonly secrets: readonly string[] }
  | { readonly type: 'reset'; readonly id: number }
  | { readonly type: 'sync'; readonly id: number }
  | { readonly type: 'stop'; readonly id: number };

/** Messages to the parent. */
export type ReceiverEvent =
  | { readonly type: 'ready'; readonly port: number }
  | { readonly type: 'request'; readonly request: ReceivedRequest }
  | { readonly type: 'ack'; readonly id: number; readonly error: string | null };

/** Start-up settings, passed as JSON in argv[2]. */
export interface ReceiverInit {
  readonly secrets: Readonly<Record<string, readonly string[]>>;
  readonly defaultStep: ReceiverStep;
}

const CHUNK = Buffer.alloc(64 * 1024, 'x');

function send(event: ReceiverEvent): void {
  process.send?.(event);
}

function main(): void {
  if (process.send === undefined)
    throw new Error('receiver-process.ts must be started with an IPC channel (see test-receiver.ts)');
  const init = JSON.parse(process.argv[2] ?? '{}') as ReceiverInit;
  const defaultStep: ReceiverStep = init.defaultStep ?? { status: 200 };
  const secrets = new Map<string, readonly string[]>(Object.entries(init.secrets ?? {}));
  const scripts = new Map<string, { steps: ReceiverStep[]; fallback: ReceiverStep | null }>();
  const verifiers = new Map<string, Webhook | Error>();
  const sockets = new Set<Socket>();
  let seq = 0;

  function verifierFor(secret: string): Webhook | Error {
    let verifier = verifiers.get(secret);
    if (verifier === undefined) {
      try {
        verifier = new Webhook(secret);
      } catch (error) {
        verifier = new Error(`secret refused by standardwebhooks: ${(error as Error).message}`);
      }
      verifiers.set(secret, verifier);
    }
    return verifier;
  }

  /** Verifies with each secret; the first that accepts wins. */
  function verify(
    path: string,
    body: Buffer,
    headers: Record<string, string>,
  ): Pick<ReceivedRequest, 'signatureValid' | 'signatureMatches' | 'verifyError'> {
    const pathSecrets = secrets.get(path);
    if (pathSecrets === undefined || pathSecrets.length === 0)
      return { signatureValid: null, signatureMatches: null, verifyError: null };
    let lastError = 'no secret';
    for (const secret of pathSecrets) {
      const verifier = verifierFor(secret);
      if (verifier instanceof Error) {
        lastError = verifier.message;
        continue;
      }
      try {
        verifier.verify(body, headers, { jsonParse: false });
        return { signatureValid: true, signatureMatches: true, verifyError: null };
      } catch (error) {
        lastError = (error as Error).message;
      }
    }
    return {
      signatureValid: false,
      signatureMatches: matchesAtOwnTimestamp(pathSecrets, body, headers),
      verifyError: lastError,
    };
  }

  /** Verifies with the clock set to the request's own timestamp: does any signature entry match? */
  function matchesAtOwnTimestamp(
    pathSecrets: readonly string[],
    body: Buffer,
    headers: Record<string, string>,
  ): boolean {
    const timestampS = Number.parseInt(headers['webhook-timestamp'] ?? '', 10);
    if (!Number.isFinite(timestampS)) return false;
    const realNow = Date.now;
    Date.now = () => timestampS * 1000;
    try {
      for (const secret of pathSecrets) {
        const verifier = verifierFor(secret);
        if (verifier instanceof Error) continue;
        try {
          verifier.verify(body, headers, { jsonParse: false });
          return true;
        } catch {
          // try the next secret
        }
      }
      return false;
    } finally {
      Date.now = realNow;
    }
  }

  function nextStep(path: string): ReceiverStep {
    const script = scripts.get(path);
    if (script === undefined) return defaultStep;
    return script.steps.shift() ?? script.fallback ?? defaultStep;
  }

  function answer(req: IncomingMessage, res: ServerResponse, step: ReceiverStep): void {
    if (step.stall === true) return;
    if (step.destroy === true) {
      req.socket.destroy();
      return;
    }
    const status = step.status ?? 200;
    const headers: Record<string, string> = { ...step.headers };
    if (step.stallAfterHeaders === true) {
      res.writeHead(status, headers);
      res.flushHeaders();
      return;
    }
    if (step.bodyBytes !== undefined) {
      res.writeHead(status, { 'content-length': String(step.bodyBytes), ...headers });
      streamBytes(res, step.bodyBytes);
      return;
    }
    const body = Buffer.from(step.body ?? '', 'utf8');
    res.writeHead(status, { 'content-length': String(body.length), ...headers });
    res.end(body);
  }

  function streamBytes(res: ServerResponse, total: number): void {
    let left = total;
    const pump = (): void => {
      while (left > 0 && !res.destroyed) {
        const n = Math.min(left, CHUNK.length);
        left -= n;
        if (!res.write(n === CHUNK.length ? CHUNK : CHUNK.subarray(0, n))) {
          res.once('drain', pump);
          return;
        }
      }
      if (!res.destroyed) res.end();
    };
    pump();
  }

  const server = createServer({ keepAliveTimeout: 60_000, requestTimeout: 0, headersTimeout: 60_000 }, (req, res) => {
    const receivedAtMs = Date.now();
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('error', () => undefined);
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const target = req.url ?? '/';
      const path = target.split('?')[0] ?? '/';
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(req.headers)) {
        if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
      }
      const step = nextStep(path);
      seq += 1;
      const request: ReceivedRequest = {
        seq,
        method: req.method ?? '',
        path,
        target,
        webhookId: headers['webhook-id'] ?? null,
        webhookTimestamp: headers['webhook-timestamp'] ?? null,
        webhookSignature: headers['webhook-signature'] ?? null,
        ...verify(path, body, headers),
        bodySha256: createHash('sha256').update(body).digest('hex'),
        bodyBytes: body.length,
        body: body.toString('utf8'),
        headers,
        receivedAtMs,
        answer: step,
      };
      send({ type: 'request', request });
      if (step.delayMs !== undefined && step.delayMs > 0) setTimeout(() => answer(req, res, step), step.delayMs);
      else answer(req, res, step);
    });
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.on('clientError', (_error, socket) => socket.destroy());

  function stop(): void {
    server.close(() => process.exit(0));
    for (const socket of sockets) socket.destroy();
    server.closeAllConnections();
  }

  process.on('message', (command: ReceiverCommand) => {
    let error: string | null = null;
    switch (command.type) {
      case 'script':
        scripts.set(command.path, { steps: [...command.steps], fallback: command.fallback });
        break;
      case 'secret':
        secrets.set(command.path, [...command.secrets]);
        for (const secret of command.secrets) {
          const verifier = verifierFor(secret);
          if (verifier instanceof Error) error = verifier.message;
        }
        break;
      case 'reset':
        scripts.clear();
        seq = 0;
        break;
      case 'sync':
        break;
      case 'stop':
        send({ type: 'ack', id: command.id, error: null });
        stop();
        return;
      default:
        error = `unknown command ${JSON.stringify(command)}`;
    }
    send({ type: 'ack', id: command.id, error });
  });
  process.on('disconnect', () => process.exit(0));

  server.listen(0, '127.0.0.1', () => {
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('no TCP address');
    send({ type: 'ready', port: address.port });
  });
}

main();
