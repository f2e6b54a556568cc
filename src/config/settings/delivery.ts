import { z } from 'zod';
import { int, durationMs, cidrList, durationList, type SettingTable } from '../parse.ts';

/** How a delivery is sent to an endpoint, retried and signed, and when an endpoint is held back. */
export const DELIVERY_SETTINGS = {
  retrySchedule: {
    env: 'TIDINGS_RETRY_SCHEDULE',
    schema: durationList,
    defaultValue: '5s,5m,30m,2h,5h,10h,10h',
    unit: 'durations',
    description: 'Delay after each failed attempt; attempts = entries + 1 (the first is immediate).',
  },
  retryJitter: {
    env: 'TIDINGS_RETRY_JITTER',
    schema: z.coerce.number().min(0).max(0.9),
    defaultValue: '0.2',
    unit: 'fraction',
    description: 'Each retry delay is drawn from [d·(1−j), d·(1+j)].',
  },
  retryAfterMinMs: {
    env: 'TIDINGS_RETRY_AFTER_MIN',
    schema: durationMs(0),
    defaultValue: '1s',
    unit: 'duration',
    description: "Lower clamp of a receiver's Retry-After.",
  },
  retryAfterMaxMs: {
    env: 'TIDINGS_RETRY_AFTER_MAX',
    schema: durationMs(0),
    defaultValue: '1h',
    unit: 'duration',
    description: "Upper clamp of a receiver's Retry-After.",
  },
  retryPolicyMaxAttempts: {
    env: 'TIDINGS_RETRY_POLICY_MAX_ATTEMPTS',
    schema: int(1, 1000),
    defaultValue: '50',
    unit: 'attempts',
    description:
      "Most attempts (maxAttempts) an endpoint's or an event type's retry policy may set; more → 422 naming " +
      'maxAttempts.',
  },
  retryPolicyMaxDelays: {
    env: 'TIDINGS_RETRY_POLICY_MAX_DELAYS',
    schema: int(1, 1000),
    defaultValue: '20',
    unit: 'delays',
    description: "Most entries of a retry policy's schedule; more → 422 naming schedule.",
  },
  retryPolicyMinDelayMs: {
    env: 'TIDINGS_RETRY_POLICY_MIN_DELAY',
    schema: durationMs(0),
    defaultValue: '1s',
    unit: 'duration',
    description:
      "Shortest delay of a retry policy's schedule, so that a policy cannot make Tidings hammer a receiver; " +
      'shorter → 422 naming the entry.',
  },
  retryPolicyMaxDelayMs: {
    env: 'TIDINGS_RETRY_POLICY_MAX_DELAY',
    schema: durationMs(1),
    defaultValue: '1d',
    unit: 'duration',
    description:
      "Longest delay of a retry policy's schedule; longer → 422 naming the entry. A policy's attemptTimeout is " +
      'bounded by TIDINGS_LEASE instead (it must exceed the timeout plus 1 s).',
  },
  connectTimeoutMs: {
    env: 'TIDINGS_CONNECT_TIMEOUT',
    schema: durationMs(1),
    defaultValue: '5s',
    unit: 'duration',
    description: 'TCP + TLS connect timeout per attempt.',
  },
  headersTimeoutMs: {
    env: 'TIDINGS_HEADERS_TIMEOUT',
    schema: durationMs(1),
    defaultValue: '10s',
    unit: 'duration',
    description: 'Time from request sent to response headers.',
  },
  bodyTimeoutMs: {
    env: 'TIDINGS_BODY_TIMEOUT',
    schema: durationMs(1),
    defaultValue: '10s',
    unit: 'duration',
    description: 'Longest gap between response body chunks.',
  },
  attemptDeadlineMs: {
    env: 'TIDINGS_ATTEMPT_DEADLINE',
    schema: durationMs(1),
    defaultValue: '15s',
    unit: 'duration',
    description: 'Overall deadline of one attempt; nothing resets it.',
  },
  maxResponseBytes: {
    env: 'TIDINGS_MAX_RESPONSE_BYTES',
    schema: int(0, 16 * 1024 * 1024),
    defaultValue: '65536',
    unit: 'bytes',
    description: 'Response bytes read per attempt; the rest is discarded and the socket closed.',
  },
  responsePrefixBytes: {
    env: 'TIDINGS_RESPONSE_PREFIX_BYTES',
    schema: int(0, 1024 * 1024),
    defaultValue: '4096',
    unit: 'bytes',
    description: 'Response body prefix stored with each attempt.',
  },
  receiverAuthRefreshMs: {
    env: 'TIDINGS_RECEIVER_AUTH_REFRESH',
    schema: durationMs(0),
    defaultValue: '10s',
    unit: 'duration',
    description:
      "How long a dispatcher uses an endpoint's receiver authentication (or its absence) before reading it " +
      'again: a change reaches deliveries within it.',
  },
  receiverAuthCacheMax: {
    env: 'TIDINGS_RECEIVER_AUTH_CACHE_MAX',
    schema: int(1, 1_000_000),
    defaultValue: '1000',
    unit: 'endpoints',
    description:
      'Endpoints whose receiver authentication a dispatcher keeps at most: the configurations, the OAuth2 ' +
      "tokens, and the TLS client certificates' connection pools (each pool a dedicated agent), the least " +
      'recently used idle ones closed first.',
  },
  oauth2TokenEarlyRefreshMs: {
    env: 'TIDINGS_OAUTH2_TOKEN_EARLY_REFRESH',
    schema: durationMs(0),
    defaultValue: '30s',
    unit: 'duration',
    description:
      "An endpoint's OAuth2 token is fetched again this long before its expires_in ends (at half its life when " +
      'that is shorter).',
  },
  oauth2TokenDefaultLifetimeMs: {
    env: 'TIDINGS_OAUTH2_TOKEN_DEFAULT_LIFETIME',
    schema: durationMs(1000),
    defaultValue: '5m',
    unit: 'duration',
    description:
      'How long an OAuth2 token is used whose response has no expires_in, or one that is neither a number nor a ' +
      'numeric string (an expires_in of 0 or less: the token serves its attempt only).',
  },
  maxSocketsPerOrigin: {
    env: 'TIDINGS_MAX_SOCKETS_PER_ORIGIN',
    schema: int(1, 10_000),
    defaultValue: '512',
    unit: 'sockets',
    description:
      'Connection cap per endpoint per dispatcher: each endpoint has its own connection pool, so endpoints on ' +
      'one origin never queue behind each other (at least the window one endpoint may hold, or that share ' +
      'cannot be reached).',
  },
  egressAllowlist: {
    env: 'TIDINGS_EGRESS_ALLOWLIST',
    schema: cidrList,
    defaultValue: '',
    unit: 'CIDR list',
    description:
      'Otherwise-refused ranges that outbound requests may reach (e.g. 127.0.0.1/32 for local development). ' +
      'Operator setting; logged at start-up.',
  },
  breakerThreshold: {
    env: 'TIDINGS_BREAKER_THRESHOLD',
    schema: int(1, 1_000_000),
    defaultValue: '10',
    unit: 'attempts',
    description:
      'Consecutive failed attempts of an endpoint that open its circuit breaker (deliveries then wait without ' +
      'spending attempts).',
  },
  breakerCooldownMs: {
    env: 'TIDINGS_BREAKER_COOLDOWN',
    schema: durationMs(1),
    defaultValue: '30s',
    unit: 'duration',
    description:
      'First cool-down of an open breaker before one probe is let through; doubles with each opening in a row.',
  },
  breakerMaxCooldownMs: {
    env: 'TIDINGS_BREAKER_MAX_COOLDOWN',
    schema: durationMs(1),
    defaultValue: '30m',
    unit: 'duration',
    description: 'Longest breaker cool-down.',
  },
  autoDisableAfterMs: {
    env: 'TIDINGS_AUTO_DISABLE_AFTER',
    schema: durationMs(1),
    defaultValue: '5d',
    unit: 'duration',
    description:
      'An endpoint whose attempts have only failed for this long is disabled (reason and time recorded); its ' +
      'waiting deliveries become skipped.',
  },
  secretRotationGraceMs: {
    env: 'TIDINGS_SECRET_ROTATION_GRACE',
    schema: durationMs(0),
    defaultValue: '24h',
    unit: 'duration',
    description:
      "After an endpoint secret is rotated, requests carry the previous secret's signature too for this long, " +
      'unless the rotate request gives gracePeriodSeconds (0 to 7 days).',
  },
  signatureHeaders: {
    env: 'TIDINGS_SIGNATURE_HEADERS',
    schema: z.enum(['webhook', 'svix', 'both']),
    defaultValue: 'both',
    unit: 'header set',
    description:
      'Signature headers on every request: webhook (webhook-id, -timestamp, -signature: Standard Webhooks), ' +
      'svix (svix-id, -timestamp, -signature, for receivers written against Svix), or both (the same values ' +
      'under both names).',
  },
} satisfies SettingTable;
