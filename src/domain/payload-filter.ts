/*
 * Endpoint payload filters (docs/adr/0029-endpoint-payload-filters.md): a JSON match over a message, in the shape of
 * Outpost's destination filters, checked once when it is written and evaluated once per message and endpoint when
 * the message is published. Pure: no I/O, no clock.
 *
 * A filter is a node. A scalar node (string, number, boolean, null) means equality. An object node is the AND of its
 * keys, each of which is
 * - a field name: the node under it applies to that field of the current value (at the root, a field of the message:
 *   eventType, eventId, channels, tags, payload);
 * - `$and` / `$or`: a non-empty list of nodes over the same value; `$not`: a node over the same value, negated;
 * - a comparison of the current value: `$eq`, `$neq` (a scalar), `$gt`, `$gte`, `$lt`, `$lte` (a number), `$in`,
 *   `$nin` (a non-empty list of scalars), `$exists` (a boolean).
 * A path goes through objects only. An array value matches `$eq`, `$in` and the number comparisons when one of its
 * elements does (Outpost: "arrays match if they contain the value"); `$neq` and `$nin` are their negations.
 * An object holds either comparisons or field names (beside either, `$and`, `$or`, `$not`): a value compared as a
 * scalar and read as an object at once could never match. A number is a safe integer or not an integer: JSON
 * parsers (this one's included) round an integer beyond 2^53 - 1, so `9007199254740993` would mean `…992`.
 */

import { tooDeepPath } from './json-depth.ts';

/** Where a problem is, from the filter's root: field names, operators and list indexes. */
export type FilterLoc = readonly (string | number)[];

/** A problem of a filter, with where it is. */
export interface FilterIssue {
  readonly loc: FilterLoc;
  readonly msg: string;
}

/** The bounds a filter is checked against (TIDINGS_FILTER_MAX_*). */
export interface FilterLimits {
  /** Largest filter as JSON text, bytes. */
  readonly maxBytes: number;
  /** Deepest nesting of objects and arrays (the root object is level 1). */
  readonly maxDepth: number;
  /** Most object keys and list entries in all. */
  readonly maxNodes: number;
  /** Most field names along one path. */
  readonly maxPath: number;
}

/** A JSON value as JSON.parse returns it. */
export type Json = null | boolean | number | string | readonly Json[] | { readonly [key: string]: Json };

/** A filter that passed {@link filterIssues}. */
export type PayloadFilter = { readonly [key: string]: Json };

/** What a filter sees of a message; `payload` is absent for a raw (non-JSON) message. */
export interface FilterSubject {
  readonly eventType: string;
  readonly eventId?: string | null;
  readonly channels?: readonly string[] | null;
  readonly tags?: readonly string[] | null;
  readonly payload?: Json | undefined;
}

/** The fields of a message a filter may name at its root. */
export const MESSAGE_FIELDS = ['eventType', 'eventId', 'channels', 'tags', 'payload'] as const;

const COMPARISONS = ['$eq', '$neq', '$gt', '$gte', '$lt', '$lte', '$in', '$nin', '$exists'] as const;
const LOGICAL = ['$and', '$or', '$not'] as const;
const OPERATORS: readonly string[] = [...COMPARISONS, ...LOGICAL];
const NUMBER_OPS = new Set(['$gt', '$gte', '$lt', '$lte']);
/** The operators that compare the value itself (beside which a field name could never match). */
const COMPARED: ReadonlySet<string> = new Set(COMPARISONS);
const SCALAR = 'expected a string, number, boolean or null';
const UNSAFE =
  `an integer beyond ±${Number.MAX_SAFE_INTEGER} (2^53 - 1): JSON numbers do not carry it exactly ` +
  '(9007199254740993 would mean 9007199254740992)';
const MIXED =
  'operators and field names cannot be mixed in one object: a value compared as a scalar is no object ' +
  'with fields; combine them under $and';

const isObject = (v: unknown): v is { readonly [key: string]: Json } =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const isScalar = (v: unknown): v is null | boolean | number | string =>
  v === null || typeof v === 'boolean' || typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v));

/** A number JSON does not carry exactly: an integer beyond ±(2^53 - 1) (parsed, it is already rounded). */
const unsafeInteger = (v: unknown): boolean => typeof v === 'number' && Number.isInteger(v) && !Number.isSafeInteger(v);

/** Bytes of `text` in UTF-8. */
const utf8Bytes = (text: string): number => new TextEncoder().encode(text).byteLength;

/**
 * The problems of `filter` (an empty list: it is a filter), each with where it is; at most `limit` of them. The
 * bounds are checked first: an oversized filter gets one issue and is not walked.
 */
export function filterIssues(filter: unknown, limits: FilterLimits, limit = 20): FilterIssue[] {
  if (!isObject(filter)) return [{ loc: [], msg: 'expected an object' }];
  // Depth first, without recursion: JSON.stringify recurses, and the walk below stops at maxDepth on its own.
  const tooDeep = tooDeepPath(filter, limits.maxDepth) !== null;
  const bytes = tooDeep ? 0 : utf8Bytes(JSON.stringify(filter));
  if (bytes > limits.maxBytes) {
    return [{ loc: [], msg: `${bytes} bytes; at most ${limits.maxBytes} (TIDINGS_FILTER_MAX_BYTES)` }];
  }
  const issues: FilterIssue[] = [];
  let nodes = 0;
  const add = (loc: FilterLoc, msg: string): void => {
    if (issues.length < limit) issues.push({ loc, msg });
  };
  // depth: levels of objects and arrays above `value`; path: field names along the way.
  const node = (value: Json, loc: FilterLoc, depth: number, path: number, root: boolean): void => {
    if (isScalar(value)) return root ? add(loc, 'expected an object') : scalar(value, loc);
    if (Array.isArray(value)) return add(loc, `${SCALAR}, or an object; a list belongs under $in`);
    if (!isObject(value)) return add(loc, SCALAR);
    if (depth + 1 > limits.maxDepth)
      return add(loc, `nested deeper than ${limits.maxDepth} (TIDINGS_FILTER_MAX_DEPTH)`);
    const keys = Object.keys(value);
    if (keys.some((k) => COMPARED.has(k)) && keys.some((k) => !k.startsWith('$'))) add(loc, MIXED);
    for (const [key, child] of Object.entries(value)) {
      nodes += 1;
      const at = [...loc, key];
      if (key.startsWith('$')) operator(key, child, at, depth + 1, path, root);
      else if (root && !(MESSAGE_FIELDS as readonly string[]).includes(key)) {
        add(at, `unknown field; a message has ${MESSAGE_FIELDS.join(', ')}`);
      } else if (path + 1 > limits.maxPath)
        add(at, `more than ${limits.maxPath} fields on one path (TIDINGS_FILTER_MAX_PATH)`);
      else node(child, at, depth + 1, path + 1, false);
    }
  };
  const list = (value: Json, loc: FilterLoc, depth: number, each: (v: Json, at: FilterLoc) => void): void => {
    if (!Array.isArray(value) || value.length === 0) return add(loc, 'expected a non-empty list');
    if (depth + 1 > limits.maxDepth)
      return add(loc, `nested deeper than ${limits.maxDepth} (TIDINGS_FILTER_MAX_DEPTH)`);
    (value as readonly Json[]).forEach((v, i) => {
      nodes += 1;
      each(v, [...loc, i]);
    });
  };
  const operator = (op: string, arg: Json, loc: FilterLoc, depth: number, path: number, root: boolean): void => {
    if (!OPERATORS.includes(op)) {
      const hint = op === '$exist' ? ' (spelled $exists here)' : op === '$ne' ? ' (spelled $neq here)' : '';
      return add(loc, `unknown operator${hint}; one of ${OPERATORS.join(', ')}`);
    }
    if (op === '$and' || op === '$or') return list(arg, loc, depth, (v, at) => node(v, at, depth + 1, path, root));
    if (op === '$not') return node(arg, loc, depth, path, root);
    if (root) return add(loc, 'compares the message itself; put it under a field (payload, eventType…)');
    if (op === '$exists') return typeof arg === 'boolean' ? undefined : add(loc, 'expected true or false');
    if (NUMBER_OPS.has(op))
      return typeof arg === 'number' && Number.isFinite(arg) ? scalar(arg, loc) : add(loc, 'expected a number');
    if (op === '$in' || op === '$nin')
      return list(arg, loc, depth, (v, at) => (isScalar(v) ? scalar(v, at) : add(at, SCALAR)));
    return isScalar(arg) ? scalar(arg, loc) : add(loc, SCALAR);
  };
  const scalar = (value: Json, loc: FilterLoc): void => (unsafeInteger(value) ? add(loc, UNSAFE) : undefined);
  node(filter, [], 0, 0, true);
  if (nodes > limits.maxNodes) {
    issues.unshift({
      loc: [],
      msg: `${nodes} keys and list entries; at most ${limits.maxNodes} (TIDINGS_FILTER_MAX_NODES)`,
    });
  }
  return issues.slice(0, limit);
}

/** Whether a filter matches everything (`{}`): storing it means having none. */
export const matchesAll = (filter: PayloadFilter): boolean => Object.keys(filter).length === 0;

const same = (v: Json | undefined, s: Json): boolean => v === s;
/** Scalar `v` is `s`; an array when one of its elements is. */
const eq = (v: Json | undefined, s: Json): boolean =>
  Array.isArray(v) ? (v as readonly Json[]).some((e) => same(e, s)) : same(v, s);
const numberHolds = (op: string, v: number, n: number): boolean =>
  op === '$gt' ? v > n : op === '$gte' ? v >= n : op === '$lt' ? v < n : v <= n;
const compares = (op: string, v: Json | undefined, n: number): boolean =>
  Array.isArray(v)
    ? (v as readonly Json[]).some((e) => typeof e === 'number' && numberHolds(op, e, n))
    : typeof v === 'number' && numberHolds(op, v, n);
const among = (v: Json | undefined, list: Json): boolean => (list as readonly Json[]).some((s) => eq(v, s));

/** A compiled node: whether it holds for `value` (undefined = the field is missing). */
type Test = (value: Json | undefined) => boolean;

/** `node` as a closure, built once per filter so that a message's evaluation walks no keys. */
function compileNode(node: Json): Test {
  if (!isObject(node)) return (value) => eq(value, node);
  const tests = Object.entries(node).map(([key, arg]) => compileKey(key, arg));
  if (tests.length === 1) return tests[0]!;
  return (value) => tests.every((t) => t(value));
}

function compileKey(key: string, arg: Json): Test {
  switch (key) {
    case '$and': {
      const parts = (arg as readonly Json[]).map(compileNode);
      return (value) => parts.every((t) => t(value));
    }
    case '$or': {
      const parts = (arg as readonly Json[]).map(compileNode);
      return (value) => parts.some((t) => t(value));
    }
    case '$not': {
      const inner = compileNode(arg);
      return (value) => !inner(value);
    }
    case '$eq':
      return (value) => eq(value, arg);
    case '$neq':
      return (value) => !eq(value, arg);
    case '$in':
      return (value) => among(value, arg);
    case '$nin':
      return (value) => !among(value, arg);
    case '$exists':
      return (value) => (value !== undefined) === arg;
    case '$gt':
    case '$gte':
    case '$lt':
    case '$lte':
      return (value) => compares(key, value, arg as number);
    default: {
      const inner = compileNode(arg);
      return (value) => inner(isObject(value) && Object.hasOwn(value, key) ? value[key] : undefined);
    }
  }
}

/** The message as a filter sees it: absent fields are missing, not null. */
export function filterDocument(subject: FilterSubject): { readonly [key: string]: Json } {
  const doc: { [key: string]: Json } = { eventType: subject.eventType };
  if (subject.eventId != null) doc.eventId = subject.eventId;
  if (subject.channels != null) doc.channels = subject.channels;
  if (subject.tags != null) doc.tags = subject.tags;
  if (subject.payload !== undefined) doc.payload = subject.payload;
  return doc;
}

/** A filter compiled by {@link compileFilter}: whether it matches a message as {@link filterDocument} shows it. */
export type CompiledFilter = (doc: { readonly [key: string]: Json }) => boolean;

/**
 * `filter` (one that passed {@link filterIssues}) as a closure, built once and kept with the filter: evaluating it
 * costs at most the filter's nodes and the lengths of the arrays it compares (a path never walks into arrays).
 */
export function compileFilter(filter: PayloadFilter): CompiledFilter {
  return compileNode(filter);
}

/** Whether `filter` (one that passed {@link filterIssues}) matches the message. */
export function filterMatches(filter: PayloadFilter, subject: FilterSubject): boolean {
  return compileFilter(filter)(filterDocument(subject));
}

/**
 * The payload of a message as a filter sees it: the parsed JSON, or undefined for a raw body or one that is not
 * JSON (its payload conditions then see a missing field).
 */
export function filterPayload(payload: Uint8Array, contentType: string | null | undefined): Json | undefined {
  if (contentType != null) return undefined;
  try {
    return JSON.parse(new TextDecoder().decode(payload)) as Json;
  } catch {
    return undefined;
  }
}
