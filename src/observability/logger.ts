import { pino, type Logger as PinoLogger } from 'pino';
import { serializeError } from './error-serializer.ts';
import type { TransientFaults } from './transient-faults.ts';

/**
 * Paths redacted from every log line (docs/design.md#security, docs/guides/security.md): credentials, secrets and
 * signatures never reach the logs. Fastify shares this logger, so request headers are covered too. This is the one
 * place redaction is configured; test/e2e/security-hygiene.test.ts scans the logs of a whole flow for leaks. The one
 * line written without it is the attempt line ({@link withoutRedaction}).
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
  // Hygiene (docs/guides/security.md): every other place a credential, secret, key or signature could sit in a logged
  // object.
  'req.headers.cookie',
  'req.headers["x-api-key"]',
  '*.authorization',
  '*.*.secret',
  'previousSecret',
  '*.previousSecret',
  'signingKeys',
  '*.signingKeys',
  'encryptionKeys',
  '*.encryptionKeys',
  'sensitiveHeaders',
  '*.sensitiveHeaders',
  '*.apiToken',
  'key',
  '*.key',
  '*.signature',
  'headers["svix-signature"]',
  '*.headers["svix-signature"]',
];

/**
 * Makes the process logger (pino, JSON lines on stdout). An `err` is written by {@link serializeError} (what
 * went wrong, never what the error holds, such as a database client). With `transient`, expected transient
 * faults are written once per change of state (src/observability/transient-faults.ts).
 */
export function createLogger(options: {
  readonly level: string;
  readonly destination?: NodeJS.WritableStream;
  readonly transient?: TransientFaults;
}): PinoLogger {
  const logger = pino(
    {
      level: options.level,
      redact: { paths: [...REDACT_PATHS], censor: '[redacted]' },
      base: { pid: process.pid },
      serializers: { err: serializeError },
      ...(options.transient === undefined ? {} : { hooks: { logMethod: options.transient.logMethod } }),
    },
    options.destination ?? process.stdout,
  );
  options.transient?.attach(logger);
  return logger;
}

/**
 * A child of `logger` that writes without redaction, for the one line per delivery attempt only: pino's
 * redaction walks every path above on every line, which cost about a tenth of a dispatcher's CPU, and that
 * line holds only ids, numbers and flags (`attemptLine` in src/app/dispatcher/attempt-line.ts; its test
 * src/app/dispatcher/attempt-line.test.ts fails when a field could carry a secret).
 */
export function withoutRedaction(logger: PinoLogger): PinoLogger {
  return logger.child({}, { redact: [] });
}
