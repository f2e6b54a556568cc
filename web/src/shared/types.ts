/** Response shapes of the Tidings API the pages read (see /api/v1/openapi.json). */

/** What holds a pending delivery back (the API's `heldBy`, `heldUntil`); absent from servers that do not say. */
export interface Hold {
  readonly heldBy?: 'paused' | 'breaker' | 'throttled' | null;
  readonly heldUntil?: string | null;
}
export interface Application {
  id: string;
  uid: string | null;
  name: string;
  rateLimit: number | null;
  createdAt: string;
  updatedAt: string;
}
export interface Endpoint {
  id: string;
  uid: string | null;
  url: string;
  description: string;
  disabled: boolean;
  filterTypes: string[] | null;
  channels: string[] | null;
  rateLimit: number | null;
  createdAt: string;
  updatedAt: string;
}
export interface HealthWindow {
  windowS: number;
  attempts: number;
  succeeded: number;
  failed: number;
  successRatio: number | null;
  p50LatencyMs: number | null;
  p99LatencyMs: number | null;
}
export interface Health {
  status: 'active' | 'paused' | 'disabled';
  statusReason: string | null;
  statusChangedAt: string | null;
  breaker: {
    state: 'closed' | 'open' | 'half_open';
    consecutiveFailures: number;
    openUntil: string | null;
    openedInARow: number;
    changedAt: string | null;
  };
  failingSince: string | null;
  lastSuccessAt: string | null;
  throttledUntil: string | null;
  limits: { maxInFlight: number | null; rateLimit: number | null; rateBurst: number | null };
  inFlight: number;
  currentRatePerS: number;
  deliveries: Record<string, number>;
  windows: HealthWindow[];
  history: { kind: string; reason: string | null; at: string }[];
}
export interface Message extends Hold {
  id: string;
  eventId: string | null;
  eventType: string;
  channels: string[] | null;
  tags: string[] | null;
  timestamp: string;
  deliveryState?: string;
  nextAttempt?: string | null;
}
export interface Attempt {
  id: string;
  msgId: string;
  endpointId: string;
  url: string;
  response: string;
  responseStatusCode: number;
  responseDurationMs: number;
  status: number;
  statusText: string;
  triggerType: number;
  timestamp: string;
  attemptNumber: number;
  errorKind: string | null;
}
export interface Destination extends Hold {
  id: string;
  uid: string | null;
  url: string;
  deliveryState: string;
  nextAttempt: string | null;
  disabled: boolean;
}
export interface TimelineEntry {
  id: string;
  state: string;
  dispatcherId: string | null;
  fencingToken: string | null;
  statusCode: number | null;
  latencyMs: number | null;
  errorKind: string | null;
  reason: string | null;
  at: string;
}
export interface Timeline extends Hold {
  deliveryState: string;
  attemptCount: number;
  nextAttemptAt: string | null;
  deadReason: string | null;
  data: TimelineEntry[];
  iterator: string | null;
  prevIterator: string | null;
  done: boolean;
}
export interface EventType {
  name: string;
  description: string;
  archived: boolean;
  deprecated: boolean;
  schemas: Record<string, unknown> | null;
  groupName: string | null;
  updatedAt: string;
}
export interface DeadLetter {
  appId?: string;
  msgId: string;
  endpointId: string;
  eventType: string;
  msgTimestamp: string;
  reason: string | null;
  attemptCount: number;
  lastStatusCode: number | null;
  lastErrorKind: string | null;
  lastAttemptAt: string | null;
  deadAt: string;
}
export interface Task {
  id: string;
  status: 'running' | 'finished' | 'failed';
  task: string;
  data: Record<string, unknown>;
  updatedAt: string;
}
export interface ApiKey {
  id: string;
  name: string;
  role: 'admin' | 'app';
  appId: string | null;
  readOnly: boolean;
  tokenPrefix: string;
  createdAt: string;
  expiresAt: string | null;
  revokedAt: string | null;
}
export interface Setting {
  name: string;
  env: string;
  value: string | null;
  defaultValue: string | null;
  isDefault: boolean;
  unit: string;
  description: string;
  secret: boolean;
}
export interface Branding {
  name: string;
  logoUrl: string | null;
  accentColor: string;
}

/** Where a shared page is shown: the application, the route prefix of its pages, and what the credential may do. */
export interface Scope {
  readonly appId: string;
  /** Route prefix: `/apps/<app>` in the console, `` in the portal. */
  readonly base: string;
  /** Write controls shown (a read-only portal token shows none; the server refuses writes regardless). */
  readonly canWrite: boolean;
  /** Operator credential (console). */
  readonly operator: boolean;
}
