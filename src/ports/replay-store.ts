/**
 * Operator actions on deliveries (DESIGN §3): resend (one manual attempt now) and replay (dead, skipped or
 * succeeded → pending with a fresh schedule; idempotent per delivery).
 */
export interface ReplayStore {
  /**
   * Queues one manual attempt of a message to an endpoint, due now (Svix "resend"). A terminal delivery
   * (dead, succeeded, skipped) becomes pending with `manual` set: if that attempt fails it returns to the
   * state it had and is not retried. A pending delivery is made due now. A leased one is left alone (an
   * attempt is already in flight). With no delivery yet for the pair, one is made.
   * @returns false when the message or the endpoint does not exist in the application (or is deleted)
   * @throws AppError `conflict` when the endpoint is disabled or paused
   */
  resend(input: { readonly appId: string; readonly messageId: string; readonly endpointId: string; readonly now: Date | null }): Promise<boolean>;
}
