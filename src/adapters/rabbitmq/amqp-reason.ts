/**
 * An error of rabbitmq-client as one line: its message without the `undefined: ` the client puts in front of a
 * connection error that has no method name (a refused login reads `undefined: ACCESS_REFUSED - …`).
 */
export function amqpReason(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.replace(/^undefined: /, '');
}
