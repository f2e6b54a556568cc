import type { ApplicationStore } from '../ports/application-store.ts';
import { randomBytes } from 'node:crypto';
import { checkEndpointUrl } from '../domain/egress-policy.ts';
import { AppError, notFound } from '../domain/errors.ts';
import { TimelineReason } from '../domain/timeline-reasons.ts';
import { headerNameProblem, headerValueProblem } from '../domain/http-fields.ts';
import { hasPrefix, newId } from '../domain/ids.ts';
import { decodeSecret, encodeSecret, InvalidSecretError, SECRET_PREFIX } from '../domain/signing.ts';
import type { EndpointChanges, EndpointRecord, EndpointStore } from '../ports/endpoint-store.ts';
import type { EndpointHasMtls } from '../ports/receiver-auth-store.ts';
import type { Page, PageQuery } from '../ports/paging.ts';
import type { Clock, Random } from '../ports/clock.ts';
import type { Tx } from '../ports/unit-of-work.ts';
import { fieldError, resolveApplication } from './applications.ts';
import type { Principal } from './credentials.ts';

/** Key bytes of a generated signing secret: the size Svix generates (`whsec_` + 32 base64 characters). */
export const GENERATED_SECRET_BYTES = 24;

/**
 * Header names an endpoint's custom headers may not set: the transport's own, and the signature headers
 * the receiver verifies (a custom `webhook-signature` would break verification).
 */
export const RESERVED_HEADER_NAMES: readonly string[] = Object.freeze([
  'host',
  'content-length',
  'content-type',
  'connection',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'keep-alive',
  'expect',
  'user-agent',
  'webhook-id',
  'webhook-timestamp',
  'webhook-signature',
  'svix-id',
  'svix-timestamp',
  'svix-signature',
]);

/** Why an endpoint stops being sent to, as recorded with its status (its deliveries' rows: {@link TimelineReason}). */
export const EndpointReason = Object.freeze({
  disabledByApi: 'disabled_by_api',
} as const);

/**
 * What a caller gives for an endpoint (Svix `EndpointIn`; `filterTypes` = `eventTypes`, `rateLimit` = `throttleRate`).
 */
export interface EndpointInput {
  readonly url: string;
  readonly description: string;
  /** Absent (undefined) on a PUT keeps the current uid; null clears it. */
  readonly uid?: string | null;
  readonly filterTypes: readonly string[] | null;
  readonly channels: readonly string[] | null;
  readonly disabled: boolean;
  readonly metadata: Readonly<Record<string, string>>;
  /** Absent (undefined) on a PUT keeps the current headers. */
  readonly headers?: Readonly<Record<string, string>> | null;
  readonly rateLimit: number | null;
  readonly version: number;
  /** Only on create: a `whsec_` secret (or its bare base64); null/absent = generate one. */
  readonly secret?: string | null;
}

/** A PATCH: only the given fields change (`disabled` moves the status). */
export type EndpointPatch = Omit<EndpointChanges, 'status'> & { readonly disabled?: boolean };

/** Dependencies of {@link createEndpoints}. */
export interface EndpointsDeps {
  readonly store: Pick<ApplicationStore, 'findApplication'> & EndpointStore;
  readonly clock: Clock;
  readonly random: Random;
  /** TIDINGS_EGRESS_ALLOWLIST: CIDR ranges endpoint URLs may point at although refused by default. */
  readonly egressAllowlist: readonly string[];
  /** TIDINGS_MAX_ENDPOINTS_PER_APP: most live endpoints of one application (bounds one publish's fan-out). */
  readonly maxEndpointsPerApp: number;
  /** Whether an endpoint has a TLS client configuration: its URL may then not become http. */
  readonly hasMtls: EndpointHasMtls;
}

/** Endpoint management (Svix endpoints API). Writes run in the caller's transaction. */
export interface Endpoints {
  /**
   * Creates an endpoint with a given or generated `whsec_` secret.
   * @throws AppError `not_found` (application), `url_not_allowed`, `validation` (secret, headers, uid), `conflict`
   *   (uid), `endpoint_limit_reached` (the application has TIDINGS_MAX_ENDPOINTS_PER_APP endpoints)
   */
  create(tx: Tx, principal: Principal, appRef: string, input: EndpointInput): Promise<EndpointRecord>;
  list(principal: Principal, appRef: string, page: PageQuery): Promise<Page<EndpointRecord>>;
  /** @throws AppError `not_found` */
  get(principal: Principal, appRef: string, ref: string): Promise<EndpointRecord>;
  /**
   * PUT: replaces the endpoint's fields; when `ref` names no endpoint and is not an `ep_` id, creates one
   * with uid = `input.uid ?? ref` (Svix "create or update"). Disabling moves pending deliveries to skipped.
   */
  upsert(
    tx: Tx,
    principal: Principal,
    appRef: string,
    ref: string,
    input: EndpointInput,
  ): Promise<{ readonly endpoint: EndpointRecord; readonly created: boolean }>;
  /**
   * PATCH: changes the given fields. Disabling moves pending deliveries to skipped (docs/design.md#delivery-lifecycle).
   */
  patch(tx: Tx, principal: Principal, appRef: string, ref: string, changes: EndpointPatch): Promise<EndpointRecord>;
  /**
   * Soft-deletes the endpoint and cancels its pending deliveries with a timeline row each, in `tx`
   * (docs/design.md#delivery-lifecycle: no request is ever sent after deletion).
   */
  delete(tx: Tx, principal: Principal, appRef: string, ref: string): Promise<void>;
  /** The current signing secret. @throws AppError `not_found` */
  secret(principal: Principal, appRef: string, ref: string): Promise<string>;
}

/**
 * Normalises a caller's secret to `whsec_<base64>` (Svix accepts the bare base64 too).
 * @throws AppError `validation` on loc body.secret when it is not 24–64 bytes of padded base64
 */
export function normaliseSecret(secret: string): string {
  const full = secret.startsWith(SECRET_PREFIX) ? secret : SECRET_PREFIX + secret;
  try {
    decodeSecret(full);
  } catch (error) {
    if (error instanceof InvalidSecretError) throw fieldError(['body', 'secret'], error.message);
    throw error;
  }
  return full;
}

/**
 * Checks an endpoint URL (egress policy and form) and returns it as it will be contacted (WHATWG `href`).
 * @throws AppError `url_not_allowed`
 */
function checkUrl(url: string, allowlist: readonly string[]): string {
  const verdict = checkEndpointUrl(url, allowlist);
  if (!verdict.ok) {
    // A refusal by the egress policy names the setting that could open the address (never its ranges).
    const opened =
      verdict.setting === undefined ? '' : `; not opened by ${verdict.setting} (the operator's allow-list)`;
    const msg = `Endpoint URL refused: ${verdict.reason}${opened}`;
    throw new AppError('url_not_allowed', [{ loc: ['body', 'url'], msg, type: 'value_error.url_not_allowed' }]);
  }
  return verdict.url.href;
}

/**
 * Refuses two names of a header map that differ only in case (`X-A` and `x-a`): header names are
 * case-insensitive (RFC 9110 §5.1), so keeping either value would be a guess.
 * @throws AppError `validation` on loc `loc` (type `value_error.duplicate_header`)
 */
export function checkHeaderNamesDistinct(names: Iterable<string>, loc: readonly (string | number)[]): void {
  const seen = new Map<string, string>();
  for (const name of names) {
    const lower = name.toLowerCase();
    const other = seen.get(lower);
    if (other !== undefined)
      throw fieldError(
        loc,
        `${JSON.stringify(other)} and ${JSON.stringify(name)} name the same header (header names are ` +
          'case-insensitive): send it once',
        'value_error.duplicate_header',
      );
    seen.set(lower, name);
  }
}

/**
 * Validates custom headers (domain/http-fields.ts: each name a token, each value sent unchanged; no two names
 * that differ only in case) and lower-cases their names.
 * @throws AppError `validation` on loc body.headers.<name>, or body.headers for two spellings of one name
 */
export function normaliseHeaders(headers: Readonly<Record<string, string>>): Record<string, string> {
  checkHeaderNamesDistinct(Object.keys(headers), ['body', 'headers']);
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase();
    const badName = headerNameProblem(name);
    if (badName !== null) throw fieldError(['body', 'headers', name], badName);
    if (RESERVED_HEADER_NAMES.includes(lower) || lower.startsWith('webhook-') || lower.startsWith('svix-'))
      throw fieldError(['body', 'headers', name], 'this header is set by Tidings and cannot be overridden');
    const badValue = headerValueProblem(value);
    if (badValue !== null) throw fieldError(['body', 'headers', name], badValue);
    out[lower] = value;
  }
  return out;
}

function checkUid(uid: string | null | undefined): void {
  if (typeof uid === 'string' && hasPrefix(uid, 'ep'))
    throw fieldError(['body', 'uid'], 'uid must not have the form of an endpoint id (ep_…)');
}

/** An empty subscription list means "all", stored as null. */
const orAll = (list: readonly string[] | null): readonly string[] | null =>
  list === null || list.length === 0 ? null : list;

/** Makes the endpoint use cases. */
export function createEndpoints(deps: EndpointsDeps): Endpoints {
  const { store, clock } = deps;

  const insert = async (tx: Tx, appId: string, input: EndpointInput, uid: string | null) => {
    const url = checkUrl(input.url, deps.egressAllowlist);
    checkUid(uid);
    const live = await store.countEndpointsLocked(tx, appId);
    if (live >= deps.maxEndpointsPerApp) {
      throw new AppError(
        'endpoint_limit_reached',
        `The application has ${live} endpoints; at most ${deps.maxEndpointsPerApp} ` +
          '(TIDINGS_MAX_ENDPOINTS_PER_APP). Delete one first.',
      );
    }
    const secret =
      input.secret === undefined || input.secret === null
        ? encodeSecret(randomBytes(GENERATED_SECRET_BYTES))
        : normaliseSecret(input.secret);
    const endpoint = await store.insertEndpoint(
      tx,
      {
        id: newId('ep', clock.nowMs(), () => deps.random.next()),
        appId,
        uid,
        url,
        description: input.description,
        version: input.version,
        filterTypes: orAll(input.filterTypes),
        channels: orAll(input.channels),
        metadata: input.metadata,
        headers: normaliseHeaders(input.headers ?? {}),
        rateLimit: input.rateLimit,
        status: input.disabled ? 'disabled' : 'active',
        statusReason: input.disabled ? EndpointReason.disabledByApi : null,
        secret,
      },
      clock.sqlNow(),
    );
    return endpoint;
  };

  /** Applies changes to a locked endpoint; a move to disabled settles its pending deliveries as skipped. */
  const change = async (tx: Tx, current: EndpointRecord, changes: EndpointPatch): Promise<EndpointRecord> => {
    const { disabled, ...given } = changes;
    const fields = given.url === undefined ? given : { ...given, url: checkUrl(given.url, deps.egressAllowlist) };
    checkUid(fields.uid);
    // The row is locked (FOR UPDATE): a receiver-auth write waits for this change, and refuses mtls on http itself.
    if (fields.url?.startsWith('http:') === true && (await deps.hasMtls(tx, current.id)))
      throw new AppError('validation', [
        {
          loc: ['body', 'url'],
          msg: 'must be https: this endpoint has a TLS client configuration (receiver auth mtls), used over TLS only',
          type: 'value_error',
        },
      ]);
    const status =
      disabled === true && current.status !== 'disabled'
        ? { status: 'disabled' as const, reason: EndpointReason.disabledByApi }
        : disabled === false && current.status === 'disabled'
          ? { status: 'active' as const, reason: null }
          : undefined;
    const update: EndpointChanges = {
      ...fields,
      ...(fields.filterTypes === undefined ? {} : { filterTypes: orAll(fields.filterTypes) }),
      ...(fields.channels === undefined ? {} : { channels: orAll(fields.channels) }),
      ...(fields.headers === undefined ? {} : { headers: normaliseHeaders(fields.headers) }),
      ...(status === undefined ? {} : { status }),
    };
    const updated = await store.updateEndpoint(tx, current.appId, current.id, update, clock.sqlNow());
    if (updated === null) throw notFound('Endpoint');
    // docs/design.md#delivery-lifecycle: disable moves pending deliveries to skipped; re-enabling does not resend them
    // (replay-missing does).
    if (status?.status === 'disabled')
      await store.settlePendingDeliveries(tx, current.id, 'skipped', TimelineReason.endpointDisabled, clock.sqlNow());
    return updated;
  };

  const locate = async (principal: Principal, appRef: string, ref: string, tx?: Tx): Promise<EndpointRecord> => {
    const app = await resolveApplication(store, principal, appRef, tx);
    const endpoint = await store.findEndpoint(app.id, ref, tx === undefined ? {} : { tx, forUpdate: true });
    if (endpoint === null) throw notFound('Endpoint');
    return endpoint;
  };

  return {
    async create(tx, principal, appRef, input) {
      const app = await resolveApplication(store, principal, appRef, tx);
      return insert(tx, app.id, input, input.uid ?? null);
    },

    async list(principal, appRef, page) {
      const app = await resolveApplication(store, principal, appRef);
      return store.listEndpoints(app.id, page);
    },

    get: (principal, appRef, ref) => locate(principal, appRef, ref),

    async upsert(tx, principal, appRef, ref, input) {
      const app = await resolveApplication(store, principal, appRef, tx);
      const current = await store.findEndpoint(app.id, ref, { tx, forUpdate: true });
      if (current === null) {
        if (hasPrefix(ref, 'ep')) throw notFound('Endpoint');
        return { endpoint: await insert(tx, app.id, { ...input, secret: null }, input.uid ?? ref), created: true };
      }
      const endpoint = await change(tx, current, {
        url: input.url,
        description: input.description,
        filterTypes: input.filterTypes,
        channels: input.channels,
        metadata: input.metadata,
        rateLimit: input.rateLimit,
        version: input.version,
        disabled: input.disabled,
        ...(input.uid === undefined ? {} : { uid: input.uid }),
        ...(input.headers === undefined ? {} : { headers: input.headers ?? {} }),
      });
      return { endpoint, created: false };
    },

    async patch(tx, principal, appRef, ref, changes) {
      return change(tx, await locate(principal, appRef, ref, tx), changes);
    },

    async delete(tx, principal, appRef, ref) {
      const current = await locate(principal, appRef, ref, tx);
      await store.softDeleteEndpoint(tx, current.appId, current.id, clock.sqlNow());
      await store.settlePendingDeliveries(tx, current.id, 'canceled', TimelineReason.endpointDeleted, clock.sqlNow());
    },

    async secret(principal, appRef, ref) {
      const endpoint = await locate(principal, appRef, ref);
      const secret = await store.endpointSecret(endpoint.appId, endpoint.id);
      if (secret === null) throw notFound('Endpoint');
      return secret;
    },
  };
}
