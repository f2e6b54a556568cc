import { connect } from '@nats-io/transport-node';
import { Connection } from 'rabbitmq-client';
import type { DoctorFacts } from '../cli/doctor.ts';
import type { Config } from '../config/config.ts';
import { amqpReason } from '../adapters/rabbitmq/amqp-reason.ts';
import { maskUrl, MASK } from '../config/effective-settings.ts';
import { permanentCauseOf } from './broker-transport.ts';

/**
 * The broker of TIDINGS_TRANSPORT as `tidings doctor` sees it: one connection with a short timeout, with the same
 * client libraries the adapters use (src/adapters/rabbitmq, src/adapters/nats), then closed. Declares nothing.
 */

/** Longest wait for the broker's handshake, ms. */
export const BROKER_PROBE_TIMEOUT_MS = 3_000;

/** The URL(s) as printed: no user or password, secret query parameters masked (a list stays a list). */
export function brokerUrlShown(urls: string): string {
  return urls
    .split(',')
    .map((part) => {
      try {
        const url = new URL(part.trim());
        url.username = '';
        url.password = '';
        return maskUrl(url.toString());
      } catch {
        return MASK;
      }
    })
    .join(',');
}

/** A failure's reason, with any password of `urls` masked. */
function reasonOf(error: unknown, urls: string): string {
  const e = error as { code?: unknown; message?: string };
  const code = typeof e.code === 'string' && /^[A-Z][A-Z_]+$/.test(e.code) ? e.code : undefined;
  const prefix = code !== undefined && !String(e.message).includes(code) ? `${code}: ` : '';
  let text = `${prefix}${amqpReason(e.message ?? String(error))}`;
  for (const part of urls.split(',')) {
    try {
      const { username, password } = new URL(part.trim());
      for (const secret of [password, decodeURIComponent(password), username]) {
        if (secret.length > 0) text = text.replaceAll(secret, MASK);
      }
    } catch {
      // Not a URL: nothing of it to mask.
    }
  }
  return text;
}

/** Connects to RabbitMQ once: the round trip, or the first error. */
async function rabbitmqProbe(url: string, timeoutMs: number): Promise<string> {
  const started = performance.now();
  const conn = new Connection({
    url,
    connectionName: 'tidings doctor',
    connectionTimeout: timeoutMs,
    retryLow: timeoutMs,
    retryHigh: timeoutMs,
  });
  try {
    const failed = new Promise<never>((_, reject) => conn.once('error', reject));
    await Promise.race([conn.onConnect(timeoutMs), failed]);
    // rabbitmq-client keeps the server's properties (its version among them) to itself.
    return `answered the AMQP 0-9-1 handshake in ${Math.round(performance.now() - started)} ms`;
  } finally {
    await conn.close().catch(() => undefined);
  }
}

/** Connects to NATS once: the server's version and JetStream, or the error. */
async function natsProbe(urls: string, timeoutMs: number): Promise<string> {
  const started = performance.now();
  const nc = await connect({
    servers: urls
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== ''),
    name: 'tidings doctor',
    timeout: timeoutMs,
    reconnect: false,
  });
  try {
    const ms = Math.round(performance.now() - started);
    const info = nc.info;
    const jetStream = info?.jetstream === true ? 'JetStream enabled' : 'JetStream not enabled: the transport needs it';
    return `answered in ${ms} ms: server ${info?.version ?? 'of unknown version'}, ${jetStream}`;
  } finally {
    await nc.close().catch(() => undefined);
  }
}

/** The transport facts for TIDINGS_TRANSPORT=rabbitmq or nats. */
export async function brokerFacts(
  config: Config,
  timeoutMs = BROKER_PROBE_TIMEOUT_MS,
): Promise<DoctorFacts['transport']> {
  const rabbit = config.transport === 'rabbitmq';
  const kind = rabbit ? 'RabbitMQ' : 'NATS';
  const urls = (rabbit ? config.rabbitmqUrl : config.natsUrl) ?? '';
  const shown = brokerUrlShown(urls);
  try {
    const detail = rabbit ? await rabbitmqProbe(urls, timeoutMs) : await natsProbe(urls, timeoutMs);
    return { kind, detail: `${shown} ${detail}` };
  } catch (error) {
    const setting = rabbit ? 'TIDINGS_RABBITMQ_URL' : 'TIDINGS_NATS_URL';
    const reason = reasonOf(error, urls);
    return {
      kind,
      detail: `${shown} unreachable`,
      error: `cannot reach the broker at ${shown}: ${reason}`,
      fix:
        permanentCauseOf(reason, setting) ??
        `check ${setting} (host, port, user, password), that ${kind} runs and that it accepts this host`,
    };
  }
}
