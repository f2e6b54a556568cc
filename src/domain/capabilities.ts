/**
 * What a credential scoped to one application may do (docs/adr/0011-credential-capabilities.md).
 *
 * The Svix capability set of app-portal tokens (`AppPortalAccessIn.capabilities`), and one capability of
 * Tidings' own, `ManageMessages` (publish messages, erase their content), which only a read-write
 * application key (`POST /api/v1/api-key` with `appId`) holds: a portal user who could publish would send
 * events signed as the operator's.
 */

/** The capabilities of Svix's `AppPortalCapability`, in its order. */
export const SVIX_CAPABILITIES = Object.freeze([
  'ViewBase',
  'ViewEndpointSecret',
  'ManageEndpointSecret',
  'ManageTransformations',
  'CreateAttempts',
  'ManageEndpoint',
] as const);

/** One Svix app-portal capability. */
export type SvixCapability = (typeof SVIX_CAPABILITIES)[number];

/** Every capability a scoped credential can hold: Svix's set and Tidings' `ManageMessages`. */
export const CAPABILITIES = Object.freeze([...SVIX_CAPABILITIES, 'ManageMessages'] as const);

/**
 * One capability of {@link CAPABILITIES}. What each allows (Svix `AppPortalAccessIn` documentation; ADR 0011 has the
 * route table):
 * - `ViewBase`: read the application and everything it owns, except endpoint secrets;
 * - `ViewEndpointSecret`: read endpoint secrets;
 * - `ManageEndpointSecret`: read and rotate endpoint secrets;
 * - `ManageTransformations`: endpoint transformations, which Tidings does not serve: it allows no route;
 * - `CreateAttempts`: resend, recover, replay-missing, bulk and dead-letter replay, send-example;
 * - `ManageEndpoint`: create, change, pause, resume and delete endpoints, probe or close their breakers,
 *   their headers, limits and secrets (reading and rotating included);
 * - `ManageMessages` (Tidings): publish messages and erase their content.
 */
export type Capability = (typeof CAPABILITIES)[number];

/** A read-only credential: Svix's deprecated `readOnly: true`, or a read-only application key. */
export const READ_ONLY_CAPABILITIES: readonly Capability[] = Object.freeze(['ViewBase']);

/** A portal token issued without `capabilities` gets every Svix capability (Svix's default). */
export const PORTAL_DEFAULT_CAPABILITIES: readonly Capability[] = SVIX_CAPABILITIES;

/** A read-write application key: every capability, `ManageMessages` included. */
export const APP_KEY_CAPABILITIES: readonly Capability[] = CAPABILITIES;

/**
 * Capabilities that may read an endpoint's signing secret: only those that may write the endpoint or its secret (or
 * were granted it by name).
 */
export const SECRET_READERS: readonly Capability[] = Object.freeze([
  'ViewEndpointSecret',
  'ManageEndpointSecret',
  'ManageEndpoint',
]);

/** Capabilities that write: none of them may be combined with `readOnly: true`. */
const WRITING: ReadonlySet<Capability> = new Set([
  'ViewEndpointSecret',
  'ManageEndpointSecret',
  'ManageTransformations',
  'CreateAttempts',
  'ManageEndpoint',
  'ManageMessages',
]);

/**
 * Why a requested capability set is refused: the index of the offending entry (or null for the whole set) and a
 * sentence.
 */
export interface CapabilityProblem {
  readonly field: 'capabilities' | 'readOnly';
  readonly index: number | null;
  readonly msg: string;
}

/**
 * The capabilities of a new portal token from Svix's `capabilities` and `readOnly` (Svix: `ViewBase` is
 * always required; absent = every capability; `readOnly` = `ViewBase` only). Duplicates are folded.
 * @returns the sorted set, or the problem that refuses the request (the caller answers 422)
 */
export function portalCapabilities(
  requested: readonly string[] | null,
  readOnly: boolean,
):
  | { readonly ok: true; readonly capabilities: readonly Capability[] }
  | { readonly ok: false; readonly problem: CapabilityProblem } {
  if (requested === null)
    return { ok: true, capabilities: readOnly ? READ_ONLY_CAPABILITIES : PORTAL_DEFAULT_CAPABILITIES };
  const known = new Set<string>(SVIX_CAPABILITIES);
  for (const [index, name] of requested.entries()) {
    if (!known.has(name))
      return {
        ok: false,
        problem: {
          field: 'capabilities',
          index,
          msg: `unknown capability "${name}"; known: ${SVIX_CAPABILITIES.join(', ')}`,
        },
      };
  }
  const set = new Set(requested as readonly SvixCapability[]);
  if (!set.has('ViewBase'))
    return { ok: false, problem: { field: 'capabilities', index: null, msg: 'ViewBase is always required' } };
  if (readOnly && [...set].some((c) => WRITING.has(c)))
    return {
      ok: false,
      problem: {
        field: 'readOnly',
        index: null,
        msg: 'readOnly: true allows ViewBase only; drop readOnly or the other capabilities',
      },
    };
  return { ok: true, capabilities: SVIX_CAPABILITIES.filter((c) => set.has(c)) };
}

/**
 * True when `held` satisfies a route's requirement: one of `anyOf` (an empty list = any credential).
 */
export function allows(held: ReadonlySet<Capability>, anyOf: readonly Capability[]): boolean {
  return anyOf.length === 0 || anyOf.some((c) => held.has(c));
}
