import { pino, type Logger as PinoLogger } from 'pino';

/**
 * Paths redacted from every log line (DESIGN §7, issue 8): credentials, secrets and signatures never reach
 * the logs. Fastify shares this logger, so request headers are covered too.
 */
export const REDACT_PATHS: readonly string[] = [
  'req.headers.authorization',
  'headers.authorization',
  'authorization',
  'secret',
  '*.secret',
  'token',
  '*.token',
  'apiToken',
  'signature',
  'headers["webhook-signature"]',
  '*.headers["webhook-signature"]',
];

/** Makes the process logger (pino, JSON lines on stdout). */
export function createLogger(options: { readonly level: string; readonly destination?: NodeJS.WritableStream }): PinoLogger {
  return pino({ level: options.level, redact: { paths: [...REDACT_PATHS], censor: '[redacted]' }, base: { pid: process.pid } }, options.destination ?? process.stdout);
}
