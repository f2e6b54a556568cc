import type { ValidationIssue } from './errors.ts';
import type { BasicAuth, ClientCertificate, OAuth2ClientCredentials, ReceiverAuth } from './receiver-auth.ts';

/**
 * A change to some parts of receiver authentication (`PATCH …/endpoint/{ep}/auth`, docs/reference/api.md): a part
 * left out is kept as stored, a part set to null is removed, a part given is merged field by field with the stored
 * one. Secrets are never shown back, so a field left out of a part keeps the stored value; when that part is not
 * configured yet, a required field left out is a 422 naming it. Inside `mtls` (and for `scope` and `audience`) a
 * field set to null removes it.
 */
export interface ReceiverAuthPatch {
  readonly basic?: Partial<BasicAuth> | null;
  readonly oauth2?: Partial<OAuth2ClientCredentials> | null;
  readonly mtls?: Partial<ClientCertificate> | null;
}

/** The outcome of {@link applyReceiverAuthPatch}: the whole configuration to validate and store, or what is missing. */
export type PatchOutcome = { readonly auth: ReceiverAuth } | { readonly issues: ValidationIssue[] };

const missing = (part: string, field: string): ValidationIssue => ({
  loc: ['body', part, field],
  msg: `required: ${part} is not configured yet, so there is no stored value to keep`,
  type: 'missing',
});

function merged<T extends object>(
  part: string,
  stored: T | undefined,
  given: Partial<T>,
  required: readonly (keyof T & string)[],
  defaults: Partial<T>,
  issues: ValidationIssue[],
): T {
  const out: Record<string, unknown> = { ...defaults, ...stored };
  for (const [k, v] of Object.entries(given)) if (v !== undefined) out[k] = v;
  if (stored === undefined) for (const k of required) if (given[k] === undefined) issues.push(missing(part, k));
  return out as T;
}

/**
 * `stored` (the decrypted configuration, undefined when none) with `patch` applied. Validate the result with
 * receiverAuthIssues as a PUT would be; an empty result means every part was removed.
 */
export function applyReceiverAuthPatch(stored: ReceiverAuth | undefined, patch: ReceiverAuthPatch): PatchOutcome {
  const issues: ValidationIssue[] = [];
  const s = stored ?? {};
  const part = <T extends object>(
    name: 'basic' | 'oauth2' | 'mtls',
    given: Partial<T> | null | undefined,
    kept: T | undefined,
    required: readonly (keyof T & string)[],
    defaults: Partial<T>,
  ): T | undefined => {
    if (given === undefined) return kept;
    if (given === null) return undefined;
    return merged(name, kept, given, required, defaults, issues);
  };
  const basic = part<BasicAuth>('basic', patch.basic, s.basic, ['username', 'password'], {});
  const oauth2 = part<OAuth2ClientCredentials>(
    'oauth2',
    patch.oauth2,
    s.oauth2,
    ['tokenUrl', 'clientId', 'clientSecret'],
    {
      scope: null,
      audience: null,
    },
  );
  const mtls = part<ClientCertificate>('mtls', patch.mtls, s.mtls, [], { certificate: null, key: null, ca: null });
  if (issues.length > 0) return { issues };
  return {
    auth: {
      ...(basic === undefined ? {} : { basic }),
      ...(oauth2 === undefined ? {} : { oauth2 }),
      ...(mtls === undefined ? {} : { mtls }),
    },
  };
}
