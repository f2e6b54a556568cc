import type { ApplicationStore } from '../ports/application-store.ts';
import { randomBytes } from 'node:crypto';
import { AppError, notFound } from '../domain/errors.ts';
import { headerNameProblem } from '../domain/http-fields.ts';
import { encodeSecret } from '../domain/signing.ts';
import type { EndpointRecord, EndpointStore } from '../ports/endpoint-store.ts';
import type { Clock } from '../ports/clock.ts';
import type { EndpointSettingsStore } from '../ports/endpoint-settings-store.ts';
import type { Tx } from '../ports/unit-of-work.ts';
import { fieldError, resolveApplication } from './applications.ts';
import type { Principal } from './credentials.ts';
import { checkHeaderNamesDistinct, GENERATED_SECRET_BYTES, normaliseHeaders, normaliseSecret } from './endpoints.ts';

/** Dependencies of {@link createEndpointSettings}. */
export interface EndpointSettingsDeps {
  readonly lookups: Pick<ApplicationStore, 'findApplication'> & Pick<EndpointStore, 'findEndpoint'>;
  readonly store: EndpointSettingsStore;
  readonly clock: Clock;
  /** TIDINGS_SECRET_ROTATION_GRACE: the grace period when the request names none, in ms. */
  readonly rotationGraceMs: number;
}

/** Svix `EndpointHeadersOut`: the plain headers, and the names of the sensitive ones (values never shown). */
export interface HeadersView {
  readonly headers: Readonly<Record<string, string>>;
  readonly sensitive: readonly string[];
}

/** Endpoint secret rotation and custom headers (Svix endpoint API). Writes run in the caller's transaction. */
export interface EndpointSettings {
  /**
   * Rotates the signing secret to `key` (a `whsec_` secret or its bare base64) or to a generated one. For
   * `graceMs` (default TIDINGS_SECRET_ROTATION_GRACE) requests carry both signatures (docs/design.md#signing).
   * @throws AppError `not_found`, `validation` (loc body.key)
   */
  rotateSecret(
    tx: Tx,
    principal: Principal,
    appRef: string,
    endpointRef: string,
    input: { readonly key: string | null; readonly graceMs: number | null },
  ): Promise<void>;
  /** Svix `GET …/headers`. @throws AppError `not_found` */
  headers(principal: Principal, appRef: string, endpointRef: string): Promise<HeadersView>;
  /** Svix `PUT …/headers`: replaces every custom header. @throws AppError `not_found`, `validation` */
  setHeaders(
    tx: Tx,
    principal: Principal,
    appRef: string,
    endpointRef: string,
    headers: Readonly<Record<string, string>>,
  ): Promise<void>;
  /**
   * Svix `PATCH …/headers`: sets the given headers, removes those given as null and those in
   * `deleteHeaders` (names compare case-insensitively), keeps the rest.
   * @throws AppError `not_found`, `validation`
   */
  patchHeaders(
    tx: Tx,
    principal: Principal,
    appRef: string,
    endpointRef: string,
    headers: Readonly<Record<string, string | null>>,
    deleteHeaders: readonly string[],
  ): Promise<void>;
}

/** A rotation's given key as `whsec_…`; the 422 names `body.key` (the field of Svix `EndpointSecretRotateIn`). */
function rotationKey(key: string): string {
  try {
    return normaliseSecret(key);
  } catch (error) {
    if (error instanceof AppError && Array.isArray(error.detail))
      throw new AppError(
        'validation',
        error.detail.map((d) => ({ ...d, loc: ['body', 'key'] })),
        { cause: error },
      );
    throw error;
  }
}

/** Makes the endpoint settings use cases. */
export function createEndpointSettings(deps: EndpointSettingsDeps): EndpointSettings {
  const { lookups, store, clock } = deps;
  const locate = async (
    principal: Principal,
    appRef: string,
    endpointRef: string,
    tx?: Tx,
  ): Promise<EndpointRecord> => {
    const app = await resolveApplication(lookups, principal, appRef, tx);
    const endpoint = await lookups.findEndpoint(app.id, endpointRef, tx === undefined ? {} : { tx, forUpdate: true });
    if (endpoint === null) throw notFound('Endpoint');
    return endpoint;
  };
  const write = async (tx: Tx, endpoint: EndpointRecord, headers: Readonly<Record<string, string>>) => {
    if (!(await store.writeHeaders(tx, endpoint.appId, endpoint.id, headers, clock.sqlNow())))
      throw notFound('Endpoint');
  };

  return {
    async rotateSecret(tx, principal, appRef, endpointRef, input) {
      const endpoint = await locate(principal, appRef, endpointRef, tx);
      const secret = input.key === null ? encodeSecret(randomBytes(GENERATED_SECRET_BYTES)) : rotationKey(input.key);
      const rotated = await store.rotateSecret(
        tx,
        endpoint.appId,
        endpoint.id,
        secret,
        input.graceMs ?? deps.rotationGraceMs,
        clock.sqlNow(),
      );
      if (!rotated) throw notFound('Endpoint');
    },

    async headers(principal, appRef, endpointRef) {
      const endpoint = await locate(principal, appRef, endpointRef);
      const stored = await store.readHeaders(endpoint.appId, endpoint.id);
      if (stored === null) throw notFound('Endpoint');
      return { headers: { ...stored.plain }, sensitive: Object.keys(stored.sensitive).sort() };
    },

    async setHeaders(tx, principal, appRef, endpointRef, headers) {
      const endpoint = await locate(principal, appRef, endpointRef, tx);
      await write(tx, endpoint, normaliseHeaders(headers));
    },

    async patchHeaders(tx, principal, appRef, endpointRef, headers, deleteHeaders) {
      // Set and removed at once (`X-A` and `x-a: null`), or two spellings of one name: a guess either way.
      checkHeaderNamesDistinct(Object.keys(headers), ['body', 'headers']);
      const set = new Set(
        Object.entries(headers)
          .filter(([, v]) => v !== null)
          .map(([k]) => k.toLowerCase()),
      );
      deleteHeaders.forEach((name, i) => {
        const bad = headerNameProblem(name);
        if (bad !== null) throw fieldError(['body', 'deleteHeaders', i], bad);
        if (set.has(name.toLowerCase()))
          throw fieldError(
            ['body', 'deleteHeaders', i],
            `${JSON.stringify(name)} is also set in headers: set it or delete it`,
            'value_error.duplicate_header',
          );
      });
      const endpoint = await locate(principal, appRef, endpointRef, tx);
      const stored = await store.readHeaders(endpoint.appId, endpoint.id, tx);
      if (stored === null) throw notFound('Endpoint');
      const merged: Record<string, string> = { ...stored.plain, ...stored.sensitive };
      const removed = new Set(
        [
          ...deleteHeaders,
          ...Object.entries(headers)
            .filter(([, v]) => v === null)
            .map(([k]) => k),
        ].map((n) => n.toLowerCase()),
      );
      for (const name of removed) delete merged[name];
      const given = Object.fromEntries(Object.entries(headers).filter((e): e is [string, string] => e[1] !== null));
      await write(tx, endpoint, { ...merged, ...normaliseHeaders(given) });
    },
  };
}
