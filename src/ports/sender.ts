import type { SendResult } from '../domain/attempt-outcome.ts';
import type { VersionedReceiverAuth } from '../domain/receiver-auth.ts';

/** One outbound webhook request. The body is the exact byte span of the published payload. */
export interface OutboundRequest {
  readonly url: string;
  /** Header names in lower case: content-type, webhook-id/-timestamp/-signature, endpoint custom headers. */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Uint8Array;
  /**
   * Connection pool of the request: requests with different keys never share or queue for connections,
   * even to one origin. The dispatcher passes the endpoint id (ADR 0009). Absent: one shared pool.
   */
  readonly poolKey?: string;
  /**
   * The endpoint the request is for; its receiver authentication is looked up by it (src/app/receiver-auth-lookup.ts).
   */
  readonly endpointId?: string;
  /**
   * This attempt's overall deadline, ms (a retry policy's attemptTimeout, src/domain/retry-policy.ts). Absent: the
   * sender's own (TIDINGS_ATTEMPT_DEADLINE).
   */
  readonly deadlineMs?: number;
  /**
   * How to authenticate to the receiver (docs/adr/0028-receiver-authentication.md): basic credentials or an OAuth2
   * token as `Authorization` (replacing an endpoint header of that name), a TLS client certificate for the
   * connection. Absent or null: none.
   */
  readonly receiverAuth?: VersionedReceiverAuth | null;
}

/**
 * Makes one HTTP attempt (docs/design.md#the-protocol, step 2; docs/design.md#security). Never throws: every failure is
 * a {@link SendResult} of type `error` with its error kind. When `signal` aborts before the request was sent, the
 * result is an error of kind `deadline` with detail `aborted` and nothing reached the receiver.
 */
export interface Sender {
  send(request: OutboundRequest, signal?: AbortSignal): Promise<SendResult>;
  /** Closes pooled connections. */
  close(): Promise<void>;
}
