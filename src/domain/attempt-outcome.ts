import { ErrorKind } from './error-kinds.ts';

/**
 * What one HTTP attempt produced, as the Sender port reports it. The sender never throws: timeouts and
 * network errors are values.
 *
 * - `response`: a status line arrived. `bodyPrefix` is at most the configured response-byte cap, decoded
 *   as UTF-8; `bodyError` names a failure while reading the body after the status line (a 2xx still counts
 *   as delivered, docs/design.md#retries-and-endpoint-health / docs/design.md#security).
 * - `error`: no usable status line (or the attempt was refused before connecting).
 *
 * Durations are in milliseconds.
 */
export type SendResult = (
  | {
      readonly type: 'response';
      readonly statusCode: number;
      /** Value of the Location header on a 3xx (never followed), else null. */
      readonly location: string | null;
      /** Raw Retry-After header value, else null. */
      readonly retryAfter: string | null;
      readonly bodyPrefix: string;
      readonly bodyError: ErrorKind | null;
      readonly durationMs: number;
    }
  | {
      readonly type: 'error';
      readonly errorKind: ErrorKind;
      /** Shown to the tenant: never what an internal name resolves to (that is in `network.reason`). */
      readonly detail: string;
      readonly durationMs: number;
    }
) & {
  /** What the operator needs and the tenant must not see; absent when the sender knows nothing more. */
  readonly network?: NetworkDetail;
};

/**
 * The network side of an attempt, for the operator only (addresses of the operator's network must not
 * reach tenants). Addresses are IP literals; `connectedAddress` adds `:port` (IPv6 in brackets).
 */
export interface NetworkDetail {
  /**
   * Every address the host name resolved to at the endpoint's latest connection (the literal itself for an IP host).
   */
  readonly resolvedAddresses?: readonly string[];
  /** The peer of the endpoint's latest connection, null when none was made. */
  readonly connectedAddress?: string | null;
  /** The full reason of a refusal or failure, names and addresses included. */
  readonly reason?: string;
  /** The setting or limit that decided it, e.g. `TIDINGS_EGRESS_ALLOWLIST`. */
  readonly decidedBy?: string;
}

/** The verdict on one attempt: delivered, retry later, or give up now (410 Gone). */
export type Verdict = 'delivered' | 'retryable' | 'gone';

/** Classified attempt: the verdict plus the error kind stored with the attempt (null when delivered). */
export interface Classification {
  readonly verdict: Verdict;
  readonly errorKind: ErrorKind | null;
  /** HTTP status when a status line arrived, else null. */
  readonly statusCode: number | null;
}

/**
 * Classifies an attempt (docs/design.md#retries-and-endpoint-health): 2xx → delivered (even if the body was cut
 * afterwards); 410 → gone; 3xx → retryable with kind `redirect` (never followed); every other status (408, 429, 5xx,
 * other 4xx) → retryable with kind `http_status`; transport errors → retryable with their own kind.
 */
export function classifyAttempt(result: SendResult): Classification {
  if (result.type === 'error') {
    return { verdict: 'retryable', errorKind: result.errorKind, statusCode: null };
  }
  const status = result.statusCode;
  if (status >= 200 && status <= 299) return { verdict: 'delivered', errorKind: null, statusCode: status };
  if (status === 410) return { verdict: 'gone', errorKind: ErrorKind.httpStatus, statusCode: status };
  if (status >= 300 && status <= 399)
    return { verdict: 'retryable', errorKind: ErrorKind.redirect, statusCode: status };
  return { verdict: 'retryable', errorKind: ErrorKind.httpStatus, statusCode: status };
}
