import type { ClaimedDelivery } from '../../ports/delivery-store.ts';
import type { Logger } from '../../ports/logger.ts';
import type { AttemptResult } from './attempt.ts';

/**
 * The fields of the one wide log line per attempt (`delivery.attempted`; docs/reference/logs.md lists them),
 * logged at info, or at warn when the outcome was fenced out. Only ids, numbers, flags and closed-set words:
 * no header, URL, body or secret, so the line needs no redaction (src/app/dispatcher/attempt-line.test.ts
 * fails if that stops being true).
 */
export function attemptLine(
  delivery: ClaimedDelivery,
  outcome: AttemptResult,
  recorded: boolean,
  maxAttempts: number,
): Readonly<Record<string, string | number | boolean | null | undefined>> {
  const { result, classification, next } = outcome;
  return {
    event: 'delivery.attempted',
    deliveryId: delivery.deliveryId,
    messageId: delivery.messageId,
    endpointId: delivery.endpointId,
    appId: delivery.appId,
    attempt: delivery.attemptNumber,
    maxAttempts,
    trigger: delivery.manual ? 'manual' : 'scheduled',
    outcome: classification.verdict,
    errorKind: classification.errorKind,
    status: classification.statusCode,
    durationMs: result.durationMs,
    next: next.next,
    nextDelayMs: next.next === 'retry' ? next.delayMs : undefined,
    deadReason: next.next === 'dead' ? next.reason : undefined,
    fencingToken: delivery.fencingToken,
    reclaimed: delivery.reclaimed,
    recorded,
  };
}

/**
 * Logs one finished attempt: the attempt line on `attemptLogger` (info, or warn when fenced out), and, when a
 * limit or the egress policy decided the outcome, the operator's detail (full reason, addresses, the setting)
 * on `logger` at warn — what the tenant's record leaves out.
 */
export function logAttempt(
  loggers: { readonly logger: Logger; readonly attemptLogger: Logger },
  delivery: ClaimedDelivery,
  outcome: AttemptResult,
  recorded: boolean,
  maxAttempts: number,
): void {
  const line = attemptLine(delivery, outcome, recorded, maxAttempts);
  if (!recorded) loggers.attemptLogger.warn(line, 'attempt outcome fenced out: a newer lease holds this delivery');
  else loggers.attemptLogger.info(line, 'delivery.attempted');
  const detail = outcome.record.operatorDetail;
  if (detail?.decidedBy !== undefined) {
    loggers.logger.warn(
      {
        deliveryId: delivery.deliveryId,
        endpointId: delivery.endpointId,
        errorKind: outcome.classification.errorKind,
        ...detail,
      },
      'attempt refused or cut by a limit',
    );
  }
}
