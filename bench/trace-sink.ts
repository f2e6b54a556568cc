/**
 * The local OTLP/HTTP sink of `npm run bench -- --traces`: a node:http server on 127.0.0.1 that accepts trace
 * exports (`POST /v1/traces`, any encoding), counts requests and bytes, and answers 200 at once — so the
 * figures show what tracing costs Tidings, not what a collector costs.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A running sink. */
export interface TraceSink {
  /** For OTEL_EXPORTER_OTLP_ENDPOINT. */
  readonly url: string;
  /** Export requests and body bytes received so far. */
  figures(): { readonly exports: number; readonly bytes: number };
  close(): Promise<void>;
}

/** Starts the sink on 127.0.0.1:0. */
export async function startTraceSink(): Promise<TraceSink> {
  let exports = 0;
  let bytes = 0;
  const server = createServer((req, res) => {
    req.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
    });
    req.on('end', () => {
      if (req.url === '/v1/traces') exports += 1;
      res
        .writeHead(req.url === '/v1/traces' ? 200 : 404, {
          'content-type': req.headers['content-type'] ?? 'application/x-protobuf',
        })
        .end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  server.unref();
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    figures: () => ({ exports, bytes }),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
