import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { AppError, type ValidationIssue } from '../domain/errors.ts';
import type { EventTypeRecord } from '../ports/event-type-store.ts';

/** ajv-formats' default export, typed for the three Ajv classes used here. */
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

/** A schema version key of Svix's `schemas` map: "1", "2", … */
const VERSION_KEY = /^[1-9][0-9]{0,8}$/;

/**
 * JSON Schema checks of message payloads against their event type (issue 3): Svix's `schemas` is a map of
 * version → JSON Schema; a payload is checked against the highest version. Drafts: 2020-12 and 2019-09 when
 * the schema's `$schema` names them, else draft-07 (Svix's own examples). Formats (date-time, email, uri…)
 * are checked. Compiled validators are cached per event type name and replaced when the event type changes
 * (`updatedAt`), so the cache holds one entry per event type that has schemas.
 */
export interface PayloadSchemas {
  /**
   * Validates a `schemas` value as given in a request: an object whose keys are versions ("1", "2", …) and
   * whose values are JSON Schemas that compile, each of whose `examples` passes it.
   * @returns the failing fields (loc `body.schemas.<version>`, or `body.schemas.<version>.examples.<i>.<path>`
   *   for an example), empty when valid
   */
  check(schemas: unknown): ValidationIssue[];
  /**
   * Checks a payload (the exact published bytes, parsed) against the event type's latest schema version.
   * Does nothing when the event type has no schemas.
   * @throws AppError `validation` (422) listing each violation at loc `body.payload.<path>`
   */
  validate(eventType: EventTypeRecord, payload: Uint8Array): void;
}

/** The highest version key of a `schemas` map, or null when it has none. */
export function latestVersion(schemas: Readonly<Record<string, unknown>>): string | null {
  const versions = Object.keys(schemas).filter((k) => VERSION_KEY.test(k)).sort((a, b) => Number(a) - Number(b));
  return versions.at(-1) ?? null;
}

function compilerFor(schema: unknown): Ajv {
  const declared = typeof schema === 'object' && schema !== null ? (schema as { $schema?: unknown }).$schema : undefined;
  const options = { allErrors: true, strict: false } as const;
  // A fresh instance per schema: compiled schemas are not registered twice under the same $id.
  const ajv = typeof declared === 'string' && declared.includes('2020-12') ? new Ajv2020(options)
    : typeof declared === 'string' && declared.includes('2019-09') ? new Ajv2019(options)
      : new Ajv(options);
  return addFormats(ajv);
}

function compile(schema: unknown): ValidateFunction {
  return compilerFor(schema).compile(schema as object | boolean);
}

/** ajv's error → the Svix/FastAPI issue shape, under `body.payload`. */
function issueOf(error: ErrorObject): ValidationIssue {
  const path = error.instancePath.split('/').filter((s) => s !== '').map((s) => s.replaceAll('~1', '/').replaceAll('~0', '~')).map((s) => (/^\d+$/.test(s) ? Number(s) : s));
  const missing = error.keyword === 'required' ? [String((error.params as { missingProperty?: unknown }).missingProperty)] : [];
  return { loc: ['body', 'payload', ...path, ...missing], msg: error.message ?? 'does not match the event type schema', type: `value_error.jsonschema.${error.keyword}` };
}

/** Makes the payload schema checks (with their validator cache). */
export function createPayloadSchemas(): PayloadSchemas {
  const cache = new Map<string, { readonly updatedAtMs: number; readonly version: string; readonly validate: ValidateFunction }>();

  const validatorOf = (eventType: EventTypeRecord, schemas: Readonly<Record<string, unknown>>, version: string): ValidateFunction => {
    const hit = cache.get(eventType.name);
    if (hit !== undefined && hit.updatedAtMs === eventType.updatedAt.valueOf() && hit.version === version) return hit.validate;
    const validate = compile(schemas[version]);
    cache.set(eventType.name, { updatedAtMs: eventType.updatedAt.valueOf(), version, validate });
    return validate;
  };

  return {
    check(schemas) {
      if (schemas === null || schemas === undefined) return [];
      if (typeof schemas !== 'object' || Array.isArray(schemas)) return [{ loc: ['body', 'schemas'], msg: 'must be an object of version → JSON Schema, e.g. {"1": {...}}', type: 'type_error.dict' }];
      const issues: ValidationIssue[] = [];
      for (const [version, schema] of Object.entries(schemas as Record<string, unknown>)) {
        if (!VERSION_KEY.test(version)) {
          issues.push({ loc: ['body', 'schemas', version], msg: 'schema versions are positive integers ("1", "2", …)', type: 'value_error' });
          continue;
        }
        if (typeof schema !== 'boolean' && (typeof schema !== 'object' || schema === null || Array.isArray(schema))) {
          issues.push({ loc: ['body', 'schemas', version], msg: 'must be a JSON Schema object', type: 'type_error.dict' });
          continue;
        }
        let validate: ValidateFunction;
        try {
          validate = compile(schema);
        } catch (error) {
          issues.push({ loc: ['body', 'schemas', version], msg: `not a valid JSON Schema: ${(error as Error).message}`, type: 'value_error.jsonschema' });
          continue;
        }
        // The schema's own `examples` (what send-example publishes) must pass it.
        const examples = typeof schema === 'object' ? (schema as { examples?: unknown }).examples : undefined;
        if (!Array.isArray(examples)) continue;
        examples.forEach((example, index) => {
          if (validate(example)) return;
          for (const e of validate.errors ?? []) {
            const { loc, msg, type } = issueOf(e);
            issues.push({ loc: ['body', 'schemas', version, 'examples', index, ...loc.slice(2)], msg, type });
          }
        });
      }
      return issues;
    },

    validate(eventType, payload) {
      const schemas = eventType.schemas;
      if (schemas === null) return;
      const version = latestVersion(schemas);
      if (version === null) return;
      let value: unknown;
      try {
        // Only for the check: the payload delivered stays the exact published bytes (DESIGN §5).
        value = JSON.parse(Buffer.from(payload).toString('utf8'));
      } catch {
        throw new AppError('validation', [{ loc: ['body', 'payload'], msg: 'not valid JSON', type: 'value_error.json' }]);
      }
      const validate = validatorOf(eventType, schemas, version);
      if (validate(value)) return;
      throw new AppError('validation', (validate.errors ?? []).map(issueOf));
    },
  };
}
