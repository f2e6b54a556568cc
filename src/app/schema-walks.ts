/**
 * Walks of a JSON Schema's subschemas that bound the cost of checking payloads against it (used by
 * payload-schemas.ts when a schema is written). Each walk is iterative: a deeply nested schema cannot overflow
 * the call stack.
 */

/** JSON types whose items ajv checks for uniqueness by hashing, in time linear in the array's length. */
const HASHED_TYPES = new Set(['string', 'number', 'integer', 'boolean', 'null']);

/** True when `items` declares only scalar types: then ajv's uniqueItems hashes (its `canOptimize`). */
function scalarItems(items: unknown): boolean {
  if (items === null || typeof items !== 'object' || Array.isArray(items)) return false;
  const type = (items as { type?: unknown }).type;
  const types = typeof type === 'string' ? [type] : Array.isArray(type) ? type : [];
  return types.length > 0 && types.every((t) => typeof t === 'string' && HASHED_TYPES.has(t));
}

/** Keywords whose value is one schema, an array of schemas, or an object whose values are schemas. */
const ONE_SCHEMA = new Set([
  'items',
  'additionalItems',
  'contains',
  'not',
  'if',
  'then',
  'else',
  'additionalProperties',
  'propertyNames',
  'unevaluatedItems',
  'unevaluatedProperties',
  'contentSchema',
]);
const SCHEMA_LIST = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems', 'items']);
const SCHEMA_MAP = new Set([
  'properties',
  'patternProperties',
  'definitions',
  '$defs',
  'dependentSchemas',
  'dependencies',
]);

/**
 * The subschemas of one schema object, with their path: only values of the keywords above. Data positions
 * (`examples`, `const`, `enum`, `default`, unknown keywords) are not schemas, so nothing in them is a keyword.
 */
type Located = { readonly node: unknown; readonly path: (string | number)[] };

function subschemas(o: Record<string, unknown>, path: readonly (string | number)[]): Located[] {
  const out: Located[] = [];
  for (const [key, value] of Object.entries(o)) {
    if (value === null || typeof value !== 'object') continue;
    if (Array.isArray(value)) {
      if (SCHEMA_LIST.has(key)) value.forEach((item, i) => out.push({ node: item, path: [...path, key, i] }));
    } else if (ONE_SCHEMA.has(key)) {
      out.push({ node: value, path: [...path, key] });
    } else if (SCHEMA_MAP.has(key)) {
      for (const [name, sub] of Object.entries(value)) out.push({ node: sub, path: [...path, key, name] });
    }
  }
  return out;
}

/**
 * The path of the first `uniqueItems: true` in `schema` that ajv would check by comparing every pair of items
 * (items not typed as scalars) without a `maxItems` of at most `maxItems` beside it, or null. Such a check
 * costs time quadratic in the array's length: 20,000 objects took 6.5 s. (`maxItems` is checked first, so
 * it bounds the pairs.) Walks the schema positions only (see {@link subschemas}), with an explicit stack.
 */
export function pairwiseUniqueItems(schema: unknown, maxItems: number): (string | number)[] | null {
  const stack: { readonly node: unknown; readonly path: (string | number)[] }[] = [{ node: schema, path: [] }];
  while (stack.length > 0) {
    const { node, path } = stack.pop()!;
    if (node === null || typeof node !== 'object' || Array.isArray(node)) continue;
    const o = node as Record<string, unknown>;
    const bounded = typeof o.maxItems === 'number' && o.maxItems <= maxItems;
    if (o.uniqueItems === true && !scalarItems(o.items) && !bounded) return [...path, 'uniqueItems'];
    stack.push(...subschemas(o, path));
  }
  return null;
}

/**
 * The regular expressions of a schema: each string `pattern` and each key of a `patternProperties` object,
 * at any depth (walked with an explicit stack: a deeply nested schema cannot overflow the call stack).
 */
export function countPatterns(schema: unknown): number {
  let count = 0;
  const stack: unknown[] = [schema];
  while (stack.length > 0) {
    const node = stack.pop();
    if (node === null || typeof node !== 'object') continue;
    if (Array.isArray(node)) {
      for (const item of node) stack.push(item);
      continue;
    }
    for (const [key, value] of Object.entries(node as Record<string, unknown>)) {
      if (key === 'pattern' && typeof value === 'string') count++;
      if (key === 'patternProperties' && value !== null && typeof value === 'object' && !Array.isArray(value))
        count += Object.keys(value).length;
      stack.push(value);
    }
  }
  return count;
}
