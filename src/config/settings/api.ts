import { z } from 'zod';
import { int, durationMs, cidrList, type SettingTable } from '../parse.ts';

/** Where the API listens and how much of it one client, address or connection may use. */
export const API_SETTINGS = {
  host: {
    env: 'HOST',
    schema: z.string().min(1),
    defaultValue: '127.0.0.1',
    unit: 'address',
    description: 'Address the HTTP API listens on.',
  },
  port: {
    env: 'PORT',
    schema: int(0, 65535),
    defaultValue: '8071',
    unit: 'port',
    description: 'Port of the HTTP API (0 = any free port).',
  },
  adminPort: {
    env: 'TIDINGS_ADMIN_PORT',
    schema: int(0, 65535),
    defaultValue: '9464',
    unit: 'port',
    description: 'Port of /livez, /readyz and /metrics of a dispatcher-only process.',
  },
  apiToken: {
    env: 'TIDINGS_API_TOKEN',
    schema: z.string().min(16).optional(),
    defaultValue: undefined,
    unit: 'secret',
    description: 'Admin Bearer token. Unset: one is generated on first start, stored hashed, and printed once.',
  },
  apiRateLimitPerS: {
    env: 'TIDINGS_API_RATE_LIMIT',
    schema: int(0, 1_000_000),
    defaultValue: '1000',
    unit: 'requests/s',
    description:
      'API requests per second per credential per API process (0 = no limit); beyond it → 429 with ' +
      'Retry-After. Routes served without a credential have their own limit per address ' +
      '(TIDINGS_PUBLIC_RATE_LIMIT).',
  },
  apiRateBurst: {
    env: 'TIDINGS_API_RATE_BURST',
    schema: int(1, 10_000_000),
    defaultValue: '2000',
    unit: 'requests',
    description:
      'Requests a credential may make at once: the limit counts BURST requests per window of BURST/RATE seconds.',
  },
  apiHeadersTimeoutMs: {
    env: 'TIDINGS_API_HEADERS_TIMEOUT',
    schema: durationMs(100),
    defaultValue: '10s',
    unit: 'duration',
    description:
      "Longest time an API connection may take to send a request's headers (a new connection counts from its " +
      'opening); then it is closed (408).',
  },
  apiRequestTimeoutMs: {
    env: 'TIDINGS_API_REQUEST_TIMEOUT',
    schema: durationMs(100),
    defaultValue: '30s',
    unit: 'duration',
    description:
      'Longest time to receive a whole API request, body included; then 408 and the connection is closed. At ' +
      'least TIDINGS_API_HEADERS_TIMEOUT.',
  },
  apiKeepAliveTimeoutMs: {
    env: 'TIDINGS_API_KEEP_ALIVE_TIMEOUT',
    schema: durationMs(100),
    defaultValue: '5s',
    unit: 'duration',
    description: 'How long an idle keep-alive API connection is kept open between requests.',
  },
  apiIdleTimeoutMs: {
    env: 'TIDINGS_API_IDLE_TIMEOUT',
    schema: durationMs(1000),
    defaultValue: '60s',
    unit: 'duration',
    description:
      'An API connection on which nothing is sent or received for this long is closed (it must exceed the ' +
      'slowest answer, e.g. TIDINGS_IDEMPOTENCY_WAIT).',
  },
  apiMaxConnections: {
    env: 'TIDINGS_API_MAX_CONNECTIONS',
    schema: int(1, 1_000_000),
    defaultValue: '2048',
    unit: 'connections',
    description:
      'Open API connections per process. At the cap a new connection evicts the oldest one that has not sent a ' +
      'request (then the oldest idle keep-alive one); with none to evict it is closed at once. Keep it, plus ' +
      'TIDINGS_CONCURRENCY and the database pools, below the file-descriptor limit (checked at start-up).',
  },
  authFailureLimit: {
    env: 'TIDINGS_AUTH_FAILURE_LIMIT',
    schema: int(0, 1_000_000),
    defaultValue: '20',
    unit: 'requests',
    description:
      'Failed authentications (401) per client address per TIDINGS_AUTH_FAILURE_WINDOW (0 = no limit); past it ' +
      'a request from that address whose credential is not valid gets 429 instead of 401. A valid credential ' +
      'is never refused by it: the credential is checked first.',
  },
  authFailureWindowMs: {
    env: 'TIDINGS_AUTH_FAILURE_WINDOW',
    schema: durationMs(100),
    defaultValue: '10s',
    unit: 'duration',
    description: 'Window of TIDINGS_AUTH_FAILURE_LIMIT.',
  },
  trustedProxies: {
    env: 'TIDINGS_TRUSTED_PROXIES',
    schema: cidrList,
    defaultValue: '',
    unit: 'CIDR list',
    description:
      'Proxies (load balancers, TLS terminators) in front of the API whose X-Forwarded-For is believed: the ' +
      'client address, which the per-address limits count, is the nearest one in X-Forwarded-For that is not ' +
      "in this list (Fastify trustProxy, proxy-addr). Empty: the socket's address, and X-Forwarded-For is " +
      'ignored.',
  },
  apiPipelineDepth: {
    env: 'TIDINGS_API_PIPELINE_DEPTH',
    schema: int(1, 1024),
    defaultValue: '4',
    unit: 'requests',
    description:
      'Requests of one API connection handled at once (HTTP/1.1 pipelining). Later ones wait their turn ' +
      'without running, so a client that does not read its answers holds at most this many answers in memory.',
  },
  apiPipelineQueue: {
    env: 'TIDINGS_API_PIPELINE_QUEUE',
    schema: int(0, 100_000),
    defaultValue: '64',
    unit: 'requests',
    description:
      'Requests of one API connection that may wait behind TIDINGS_API_PIPELINE_DEPTH; one more (a client ' +
      'writing far ahead of reading its answers) closes the connection.',
  },
  apiCredentialConcurrency: {
    env: 'TIDINGS_API_CREDENTIAL_CONCURRENCY',
    schema: int(0, 1_000_000),
    defaultValue: '256',
    unit: 'requests',
    description:
      'Requests of one credential in progress at once per API process, slow bodies included (0 = no limit); ' +
      'one more → 429 concurrency_limited with Retry-After, so one credential cannot take every connection or ' +
      'every database slot from the others.',
  },
  apiAddressConcurrency: {
    env: 'TIDINGS_API_ADDRESS_CONCURRENCY',
    schema: int(0, 1_000_000),
    defaultValue: '1024',
    unit: 'requests',
    description:
      'Requests of one client address (see TIDINGS_TRUSTED_PROXIES; IPv6 by /64) in progress at once per API ' +
      'process, with or without a credential (0 = no limit); one more → 429 concurrency_limited with ' +
      'Retry-After.',
  },
  apiFairSlots: {
    env: 'TIDINGS_API_FAIR_SLOTS',
    schema: int(0, 100_000),
    defaultValue: '8',
    unit: 'requests',
    description:
      "Requests with a credential whose handlers run at once per API process, apart from each credential's " +
      "first (0 = no queue): past it a request waits, after its body was read, in its credential's queue, and " +
      "the credentials waiting are served in turn, one request each, so one credential's flood gets its share " +
      'and no more while others wait (ADR 0027). A credential with nothing running never waits.',
  },
  apiMinBodyRate: {
    env: 'TIDINGS_API_MIN_BODY_RATE',
    schema: int(0, 1_000_000_000),
    defaultValue: '1024',
    unit: 'bytes/s',
    description:
      'Slowest a request body may arrive once TIDINGS_API_BODY_RATE_GRACE has passed (0 = no minimum): a body ' +
      'must have sent rate × (elapsed − grace) bytes at every moment, else 408 request_timeout and the ' +
      'connection is closed.',
  },
  apiBodyRateGraceMs: {
    env: 'TIDINGS_API_BODY_RATE_GRACE',
    schema: durationMs(0),
    defaultValue: '2s',
    unit: 'duration',
    description:
      'Time a request body may take before TIDINGS_API_MIN_BODY_RATE applies (counted from the end of its ' +
      'headers).',
  },
  publicRateLimitPerS: {
    env: 'TIDINGS_PUBLIC_RATE_LIMIT',
    schema: int(0, 1_000_000),
    defaultValue: '50',
    unit: 'requests/s',
    description:
      'Requests per second per client address to the routes served without a credential (health, readiness, ' +
      'metrics, the OpenAPI document, the web pages and their files) per API process (0 = no limit); beyond it ' +
      '→ 429 rate_limited with Retry-After.',
  },
  publicRateBurst: {
    env: 'TIDINGS_PUBLIC_RATE_BURST',
    schema: int(1, 10_000_000),
    defaultValue: '200',
    unit: 'requests',
    description:
      'Requests a client address may make at once to those routes: the limit counts BURST requests per window ' +
      'of BURST/RATE seconds.',
  },
  refusalLogRatePerS: {
    env: 'TIDINGS_REFUSAL_LOG_RATE',
    schema: int(0, 1_000_000),
    defaultValue: '10',
    unit: 'lines/s',
    description:
      'Request lines logged per second for refusals (401, 429) and dropped connections, and, apart, for ' +
      'clients that went away (an aborted upload, a connection reset before the answer); beyond it lines are ' +
      'counted and one summary line per second says how many were not written.',
  },
} satisfies SettingTable;
