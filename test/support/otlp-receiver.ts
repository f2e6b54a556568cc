/**
 * A real OTLP/HTTP trace receiver on 127.0.0.1 (OTLP specification, "OTLP/HTTP", JSON encoding): it accepts
 * `POST /v1/traces` with `application/json` bodies (OTEL_EXPORTER_OTLP_PROTOCOL=http/json), keeps every span
 * in a flat form, and answers 200 with an empty partial-success object. Waiting is event-driven: on an export.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** An attribute value as exported, flattened to a JavaScript value. */
export type AttributeValue = string | number | boolean | null | readonly AttributeValue[];

/** One exported span, flattened. Ids are lower-case hex (the OTLP JSON encoding). */
export interface ReceivedSpan {
  readonly service: string;
  readonly scope: string;
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string;
  readonly name: string;
  /** OTLP span kind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  readonly kind: number;
  readonly startNs: bigint;
  readonly attributes: Readonly<Record<string, AttributeValue>>;
  readonly resource: Readonly<Record<string, AttributeValue>>;
  readonly events: readonly { readonly name: string; readonly attributes: Readonly<Record<string, AttributeValue>> }[];
  readonly links: readonly {
    readonly traceId: string;
    readonly spanId: string;
    readonly attributes: Readonly<Record<string, AttributeValue>>;
  }[];
  /** OTLP status code: 0 unset, 1 ok, 2 error. */
  readonly status: number;
}

interface JsonValue {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
  arrayValue?: { values?: JsonValue[] };
}
interface JsonKeyValue {
  key: string;
  value?: JsonValue;
}

const valueOf = (v: JsonValue | undefined): AttributeValue => {
  if (v === undefined) return null;
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.arrayValue !== undefined) return (v.arrayValue.values ?? []).map(valueOf);
  return null;
};
const attrs = (list: JsonKeyValue[] | undefined): Record<string, AttributeValue> =>
  Object.fromEntries((list ?? []).map((kv) => [kv.key, valueOf(kv.value)]));
/** OTLP JSON ids are hex; a base64 one (protobuf-style JSON) is converted. */
const hexId = (id: string | undefined): string =>
  id === undefined || id === '' ? '' : /^[0-9a-f]+$/.test(id) ? id : Buffer.from(id, 'base64').toString('hex');

/** A running receiver. */
export interface OtlpReceiver {
  /** Base URL for OTEL_EXPORTER_OTLP_ENDPOINT, e.g. `http://127.0.0.1:43210`. */
  readonly url: string;
  /** Every span received so far. */
  spans(): readonly ReceivedSpan[];
  /** Raw export bodies received so far (for a check over everything that was sent). */
  bodies(): readonly string[];
  /** Resolves with the spans once `predicate` holds over them; rejects after `timeoutMs`. */
  waitFor(
    predicate: (spans: readonly ReceivedSpan[]) => boolean,
    timeoutMs: number,
    what: string,
  ): Promise<readonly ReceivedSpan[]>;
  close(): Promise<void>;
}

/** Starts a receiver on 127.0.0.1:0. */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const bodies: string[] = [];
  const waiters = new Set<() => void>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      if (req.method !== 'POST' || req.url !== '/v1/traces' || !(req.headers['content-type'] ?? '').includes('json')) {
        res.writeHead(404).end();
        return;
      }
      bodies.push(text);
      const body = JSON.parse(text) as {
        resourceSpans?: {
          resource?: { attributes?: JsonKeyValue[] };
          scopeSpans?: { scope?: { name?: string }; spans?: Record<string, unknown>[] }[];
        }[];
      };
      for (const rs of body.resourceSpans ?? []) {
        const resource = attrs(rs.resource?.attributes);
        for (const ss of rs.scopeSpans ?? []) {
          for (const s of ss.spans ?? []) {
            spans.push({
              service: String(resource['service.name'] ?? ''),
              scope: ss.scope?.name ?? '',
              traceId: hexId(s.traceId as string),
              spanId: hexId(s.spanId as string),
              parentSpanId: hexId(s.parentSpanId as string | undefined),
              name: String(s.name),
              kind: Number(s.kind ?? 0),
              startNs: BigInt(String(s.startTimeUnixNano ?? '0')),
              attributes: attrs(s.attributes as JsonKeyValue[] | undefined),
              resource,
              events: ((s.events ?? []) as { name: string; attributes?: JsonKeyValue[] }[]).map((e) => ({
                name: e.name,
                attributes: attrs(e.attributes),
              })),
              links: ((s.links ?? []) as { traceId: string; spanId: string; attributes?: JsonKeyValue[] }[]).map(
                (l) => ({ traceId: hexId(l.traceId), spanId: hexId(l.spanId), attributes: attrs(l.attributes) }),
              ),
              status: Number((s.status as { code?: number } | undefined)?.code ?? 0),
            });
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      for (const w of [...waiters]) w();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans: () => spans,
    bodies: () => bodies,
    waitFor(predicate, timeoutMs, what) {
      if (predicate(spans)) return Promise.resolve(spans);
      return new Promise((resolve, reject) => {
        const check = (): void => {
          if (!predicate(spans)) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve(spans);
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(
            new Error(
              `OTLP receiver: ${what} not seen within ${timeoutMs} ms; spans: ` +
                `${spans.map((s) => `${s.service}/${s.name}`).join(', ')}`,
            ),
          );
        }, timeoutMs);
        waiters.add(check);
      });
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
