import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import type { RegExpEngine } from 'ajv/dist/types/index.js';
import { RE2JS } from 're2js';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { settingDefault } from '../config/config.ts';
import { AppError, type ValidationIssue } from '../domain/errors.ts';
import type { EventTypeRecord } from '../ports/event-type-store.ts';
import { sameValueRefLoop, type SchemaPath } from './schema-ref-cycles.ts';
import { countPatterns, pairwiseUniqueItems } from './schema-walks.ts';

/** ajv-formats' default export, typed for the three Ajv classes used here. */
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

/** A schema version key of Svix's `schemas` map: "1", "2", … */
const VERSION_KEY = /^[1-9][0-9]{0,8}$/;

/**
 * JSON Schema checks of message payloads against their event type (docs/adr/0003-svix-compatibility.md): Svix's
 * `schemas` is a map of version → JSON Schema; a payload is checked against the highest version. Drafts: 2020-12 and
 * 2019-09 when the schema's `$schema` names them, else draft-07 (Svix's own examples). Formats (date-time, email, uri…)
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
   * @throws AppError `validation` (422) naming the first violation at loc `body.payload.<path>` (with the
   *   branches of an `anyOf` / `oneOf` it failed in)
   */
  validate(eventType: EventTypeRecord, payload: Uint8Array): void;
}

/** The highest version key of a `schemas` map, or null when it has none. */
export function latestVersion(schemas: Readonly<Record<string, unknown>>): string | null {
  const versions = Object.keys(schemas)
    .filter((k) => VERSION_KEY.test(k))
    .sort((a, b) => Number(a) - Number(b));
  return versions.at(-1) ?? null;
}

/** Thrown by the regular-expression engine for a pattern RE2 cannot run (look-around, back-references). */
class UnsupportedPatternError extends Error {}

/**
 * ajv's engine for `pattern` and `patternProperties`: RE2 semantics through re2js (a pure-JavaScript port of
 * RE2), whose matching time is linear in the input, so no pattern can freeze the event loop by
 * backtracking — `^(a+)+$` on 30 characters took 1.8 s with JavaScript's RegExp. JSON Schema patterns are
 * ECMA-262 (JSON Schema 2020-12 core §6.4); the ones RE2 cannot run — look-around, back-references — are
 * refused when the schema is written (ajv's `code.regExp` option is the documented way to swap engines).
 */
const linearRegExp: RegExpEngine = Object.assign(
  (pattern: string) => {
    let re: RE2JS;
    try {
      re = RE2JS.compile(RE2JS.translateRegExp(pattern));
    } catch (error) {
      throw new UnsupportedPatternError(
        `pattern ${JSON.stringify(pattern.slice(0, 100))} is not supported (linear-time RE2 syntax: no ` +
          `look-around, no back-references): ${(error as Error).message}`,
      );
    }
    // ajv keys compiled patterns by `toString()`: each must name its own pattern, or all would share the first.
    return { test: (text: string) => re.test(text), toString: () => `re2js:${pattern}` };
  },
  { code: 're2js' },
);

/**
 * Limits of {@link createPayloadSchemas} (TIDINGS_MAX_SCHEMA_BYTES, TIDINGS_MAX_SCHEMA_PATTERNS,
 * TIDINGS_MAX_SCHEMA_UNIQUE_ITEMS).
 */
export interface SchemaLimits {
  /** Largest schema of one version, as JSON text, in bytes. */
  readonly maxSchemaBytes: number;
  /** Most `pattern` values plus `patternProperties` keys in one schema. */
  readonly maxSchemaPatterns: number;
  /** Largest `maxItems` beside a `uniqueItems` whose items are not typed as scalars (compared two by two). */
  readonly maxSchemaUniqueItems: number;
}

/** The defaults of {@link SchemaLimits}: those of their settings. */
const defaultSchemaLimits = (): SchemaLimits => ({
  maxSchemaBytes: settingDefault('maxSchemaBytes'),
  maxSchemaPatterns: settingDefault('maxSchemaPatterns'),
  maxSchemaUniqueItems: settingDefault('maxSchemaUniqueItems'),
});

/**
 * `allErrors: false`: a check stops at the first violation, so its work and its answer are bounded by the
 * schema, not by the payload (with every violation listed, a 900 KB payload gave a 45 MB answer).
 */
const AJV_OPTIONS = { allErrors: false, strict: false, code: { regExp: linearRegExp } } as const;
/** One instance per draft, made once: a new instance with its formats cost more than compiling a small schema. */
const compilers: { draft7?: Ajv; draft2019?: Ajv; draft2020?: Ajv } = {};

function compilerFor(schema: unknown): Ajv {
  const declared =
    typeof schema === 'object' && schema !== null ? (schema as { $schema?: unknown }).$schema : undefined;
  if (typeof declared === 'string' && declared.includes('2020-12'))
    return (compilers.draft2020 ??= addFormats(new Ajv2020(AJV_OPTIONS)));
  if (typeof declared === 'string' && declared.includes('2019-09'))
    return (compilers.draft2019 ??= addFormats(new Ajv2019(AJV_OPTIONS)));
  return (compilers.draft7 ??= addFormats(new Ajv(AJV_OPTIONS)));
}

/** Validators compiled lately, by schema text: a schema checked when written is not compiled again to publish. */
const RECENT_MAX = 64;
const recent = new Map<string, ValidateFunction>();

function compile(schema: unknown): ValidateFunction {
  const text = JSON.stringify(schema);
  const hit = recent.get(text);
  if (hit !== undefined) return hit;
  const ajv = compilerFor(schema);
  let validate: ValidateFunction;
  try {
    validate = ajv.compile(schema as object | boolean);
  } finally {
    // Unregistered at once: the same $id may be compiled again (a new version, another event type), and the
    // shared instance keeps nothing per schema.
    if (typeof schema === 'object' && schema !== null) ajv.removeSchema(schema as object);
  }
  recent.set(text, validate);
  if (recent.size > RECENT_MAX) recent.delete(recent.keys().next().value!);
  return validate;
}

/** ajv's error → the Svix/FastAPI issue shape, under `body.payload`. */
function issueOf(error: ErrorObject): ValidationIssue {
  const path = error.instancePath
    .split('/')
    .filter((s) => s !== '')
    .map((s) => s.replaceAll('~1', '/').replaceAll('~0', '~'))
    .map((s) => (/^\d+$/.test(s) ? Number(s) : s));
  const missing =
    error.keyword === 'required' ? [String((error.params as { missingProperty?: unknown }).missingProperty)] : [];
  return {
    loc: ['body', 'payload', ...path, ...missing],
    msg: error.message ?? 'does not match the event type schema',
    type: `value_error.jsonschema.${error.keyword}`,
  };
}

/** The issue of a schema whose reference comes back to the same value (see {@link sameValueRefLoop}). */
function refLoopIssue(loc: readonly (string | number)[], at: SchemaPath): ValidationIssue {
  return {
    loc,
    msg:
      `the ${at.map(String).join('/') || '$ref'} refers back to its own schema without stepping into a property ` +
      'or an item of the value, so a check would never end; refer back only from inside properties, items, ' +
      'additionalProperties, patternProperties, prefixItems or contains',
    type: 'value_error.jsonschema.ref_loop',
  };
}

/** The message of a check that ran out of call stack on a value nested too deeply. */
const TOO_DEEP = 'nested too deeply to be checked against the schema';
/** The message of a compile that ran out of call stack. */
const TOO_DEEP_TO_COMPILE = 'the schema is nested too deeply to compile';
/** ajv returns a promise, not a verdict, for a schema with `$async: true`: every payload would pass. */
const ASYNC = 'an asynchronous schema ($async) is not supported';

/** A compiled schema, or why a payload cannot be checked against it (a schema stored before it was refused). */
type Checker = { readonly validate: ValidateFunction } | { readonly unusable: string };

/**
 * Checks one version of a `schemas` map (see {@link PayloadSchemas.check}), adding what fails to `issues`.
 * @throws RangeError when the schema or an example is nested too deeply for a step not guarded on its own
 */
function checkVersion(version: string, schema: unknown, limits: SchemaLimits, issues: ValidationIssue[]): void {
  if (!VERSION_KEY.test(version)) {
    issues.push({
      loc: ['body', 'schemas', version],
      msg: 'schema versions are positive integers ("1", "2", …)',
      type: 'value_error',
    });
    return;
  }
  if (typeof schema !== 'boolean' && (typeof schema !== 'object' || schema === null || Array.isArray(schema))) {
    issues.push({
      loc: ['body', 'schemas', version],
      msg: 'must be a JSON Schema object',
      type: 'type_error.dict',
    });
    return;
  }
  const bytes = Buffer.byteLength(JSON.stringify(schema), 'utf8');
  if (bytes > limits.maxSchemaBytes) {
    issues.push({
      loc: ['body', 'schemas', version],
      msg: `the schema is ${bytes} bytes of JSON; at most ${limits.maxSchemaBytes} (TIDINGS_MAX_SCHEMA_BYTES)`,
      type: 'value_error.jsonschema.too_large',
    });
    return;
  }
  const patterns = countPatterns(schema);
  if (patterns > limits.maxSchemaPatterns) {
    issues.push({
      loc: ['body', 'schemas', version],
      msg:
        `the schema has ${patterns} patterns; at most ${limits.maxSchemaPatterns} ` + '(TIDINGS_MAX_SCHEMA_PATTERNS)',
      type: 'value_error.jsonschema.too_many_patterns',
    });
    return;
  }
  const pairwise = pairwiseUniqueItems(schema, limits.maxSchemaUniqueItems);
  if (pairwise !== null) {
    issues.push({
      loc: ['body', 'schemas', version, ...pairwise],
      msg:
        'uniqueItems compares items two by two unless they are typed as strings, numbers, integers, ' +
        'booleans or ' +
        'null (time quadratic in their number): give items such a type, or a maxItems of at most ' +
        `${limits.maxSchemaUniqueItems} beside it (TIDINGS_MAX_SCHEMA_UNIQUE_ITEMS)`,
      type: 'value_error.jsonschema.unique_items',
    });
    return;
  }
  const loop = sameValueRefLoop(schema);
  if (loop !== null) {
    issues.push(refLoopIssue(['body', 'schemas', version, ...loop], loop));
    return;
  }
  let validate: ValidateFunction;
  try {
    validate = compile(schema);
  } catch (error) {
    if (error instanceof RangeError) {
      issues.push({
        loc: ['body', 'schemas', version],
        msg: TOO_DEEP_TO_COMPILE,
        type: 'value_error.jsonschema.too_deep',
      });
      return;
    }
    if (error instanceof UnsupportedPatternError) {
      issues.push({
        loc: ['body', 'schemas', version],
        msg: error.message,
        type: 'value_error.jsonschema.pattern',
      });
      return;
    }
    issues.push({
      loc: ['body', 'schemas', version],
      msg: `not a valid JSON Schema: ${(error as Error).message}`,
      type: 'value_error.jsonschema',
    });
    return;
  }
  if ((validate as { $async?: unknown }).$async === true) {
    issues.push({ loc: ['body', 'schemas', version, '$async'], msg: ASYNC, type: 'value_error.jsonschema' });
    return;
  }
  // The schema's own `examples` (what send-example publishes) must pass it.
  const examples = typeof schema === 'object' ? (schema as { examples?: unknown }).examples : undefined;
  if (!Array.isArray(examples)) return;
  examples.forEach((example, index) => {
    let valid: boolean;
    try {
      valid = validate(example) as boolean;
    } catch {
      // Out of call stack on a deep example (a schema whose loops step into the value ends on any other).
      const loc = ['body', 'schemas', version, 'examples', index];
      issues.push({ loc, msg: `the example is ${TOO_DEEP}`, type: 'value_error.jsonschema.too_deep' });
      return;
    }
    if (valid) return;
    for (const e of validate.errors ?? []) {
      const { loc, msg, type } = issueOf(e);
      issues.push({ loc: ['body', 'schemas', version, 'examples', index, ...loc.slice(2)], msg, type });
    }
  });
}
/**
 * Makes the payload schema checks (with their validator cache). A schema is refused at write time when its
 * JSON is larger than `limits.maxSchemaBytes`, it has more than `limits.maxSchemaPatterns` regular
 * expressions, or a `uniqueItems` would compare items pairwise beyond `limits.maxSchemaUniqueItems`
 * ({@link pairwiseUniqueItems}), so compiling one (at write time, and once per event-type change on the
 * publish path) and checking a payload against it cost bounded time: a schema of 8,000 patterns took 7.8 s to
 * compile. A check stops at its first violation (`allErrors: false`).
 */
export function createPayloadSchemas(limits: SchemaLimits = defaultSchemaLimits()): PayloadSchemas {
  const cache = new Map<
    string,
    { readonly updatedAtMs: number; readonly version: string; readonly checker: Checker }
  >();

  /** Compiles a stored schema once per change; one that can never check a payload is remembered as such. */
  const checkerOf = (schema: unknown): Checker => {
    const loop = sameValueRefLoop(schema);
    if (loop !== null) return { unusable: refLoopIssue([], loop).msg };
    try {
      const validate = compile(schema);
      return (validate as { $async?: unknown }).$async === true ? { unusable: ASYNC } : { validate };
    } catch (error) {
      return { unusable: error instanceof RangeError ? TOO_DEEP_TO_COMPILE : 'the schema does not compile' };
    }
  };

  const checkerFor = (
    eventType: EventTypeRecord,
    schemas: Readonly<Record<string, unknown>>,
    version: string,
  ): Checker => {
    const hit = cache.get(eventType.name);
    if (hit !== undefined && hit.updatedAtMs === eventType.updatedAt.valueOf() && hit.version === version)
      return hit.checker;
    const checker = checkerOf(schemas[version]);
    cache.set(eventType.name, { updatedAtMs: eventType.updatedAt.valueOf(), version, checker });
    return checker;
  };

  return {
    check(schemas) {
      if (schemas === null || schemas === undefined) return [];
      if (typeof schemas !== 'object' || Array.isArray(schemas))
        return [
          {
            loc: ['body', 'schemas'],
            msg: 'must be an object of version → JSON Schema, e.g. {"1": {...}}',
            type: 'type_error.dict',
          },
        ];
      const issues: ValidationIssue[] = [];
      for (const [version, schema] of Object.entries(schemas as Record<string, unknown>)) {
        try {
          checkVersion(version, schema, limits, issues);
        } catch (error) {
          // Out of call stack (JSON.stringify, ajv) on a schema nested too deeply: the writer's input, not a fault.
          if (!(error instanceof RangeError)) throw error;
          issues.push({
            loc: ['body', 'schemas', version],
            msg: TOO_DEEP_TO_COMPILE,
            type: 'value_error.jsonschema.too_deep',
          });
        }
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
        // Only for the check: the payload delivered stays the exact published bytes (docs/design.md#publishing).
        value = JSON.parse(Buffer.from(payload).toString('utf8'));
      } catch {
        throw new AppError('validation', [
          { loc: ['body', 'payload'], msg: 'not valid JSON', type: 'value_error.json' },
        ]);
      }
      const checker = checkerFor(eventType, schemas, version);
      if ('unusable' in checker) {
        throw new AppError('validation', [
          {
            loc: ['body', 'eventType'],
            msg:
              `no payload can be checked against version ${version} of event type "${eventType.name}": ` +
              `${checker.unusable}. Replace the schema (PUT /api/v1/event-type/{name})`,
            type: 'value_error.jsonschema.unusable_schema',
          },
        ]);
      }
      let valid: boolean;
      try {
        valid = checker.validate(value) as boolean;
      } catch {
        // Out of call stack: the loops of a sound schema step into the value, so the value is nested too deeply.
        throw new AppError('validation', [
          { loc: ['body', 'payload'], msg: `the payload is ${TOO_DEEP}`, type: 'value_error.jsonschema.too_deep' },
        ]);
      }
      if (valid) return;
      throw new AppError('validation', (checker.validate.errors ?? []).map(issueOf));
    },
  };
}
