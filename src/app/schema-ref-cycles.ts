/**
 * A JSON Schema whose `$ref` can reach itself again while checking the same value never ends: `{"anyOf":
 * [{"$ref": "#"}, …]}`, `{"$defs": {"x": {"allOf": [{"$ref": "#/$defs/x"}]}}}`, `{"not": {"$ref": "#"}}`. ajv
 * compiles it, then every check of a payload recurses until the call stack overflows. A recursive schema is
 * sound when each loop steps into a part of the value (a property, an item) before it refers back: that
 * part is smaller, so the check ends. This file finds the loops that do not.
 */

/** A place in a schema document: the keywords and indexes from its root. */
export type SchemaPath = readonly (string | number)[];

/**
 * Keywords whose subschemas apply to the same value as their schema (so a loop through them never ends).
 * Every other applicator steps into a part of the value (properties, patternProperties,
 * additionalProperties, items, prefixItems, additionalItems, contains, propertyNames,
 * unevaluatedProperties, unevaluatedItems) or is not applied at all (`$defs`, `definitions`, `contentSchema`).
 */
const SAME_VALUE_ONE = new Set(['not', 'if', 'then', 'else']);
const SAME_VALUE_LIST = new Set(['allOf', 'anyOf', 'oneOf']);
const SAME_VALUE_MAP = new Set(['dependentSchemas', 'dependencies']);
/** The reference keywords: each applies its target to the same value. */
const REF_KEYWORDS = ['$ref', '$recursiveRef', '$dynamicRef'] as const;

/** Keywords whose value is one subschema, a list of them, or a map of them (to find every schema object). */
const ONE = new Set([
  ...SAME_VALUE_ONE,
  'items',
  'additionalItems',
  'contains',
  'additionalProperties',
  'propertyNames',
  'unevaluatedItems',
  'unevaluatedProperties',
  'contentSchema',
]);
const LIST = new Set([...SAME_VALUE_LIST, 'prefixItems', 'items']);
const MAP = new Set([...SAME_VALUE_MAP, 'properties', 'patternProperties', 'definitions', '$defs']);

/** The base URI of a schema without `$id`: references resolve against it like against any other. */
const DEFAULT_BASE = 'https://schema.invalid/root.json';

/** A path kept as a link to its parent: a deep schema costs memory linear in its size, not quadratic. */
interface Link {
  readonly parent: Link | null;
  readonly key: string | number;
}

const extend = (parent: Link | null, keys: readonly (string | number)[]): Link | null =>
  keys.reduce<Link | null>((link, key) => ({ parent: link, key }), parent);

function pathOf(link: Link | null): SchemaPath {
  const out: (string | number)[] = [];
  for (let at = link; at !== null; at = at.parent) out.push(at.key);
  return out.reverse();
}

interface SchemaNode {
  readonly schema: Record<string, unknown>;
  readonly path: Link | null;
  /** The base URI that its references resolve against (without a fragment). */
  readonly base: string;
}

/** An edge to a subschema (or a reference target) applied to the same value. */
interface Edge {
  readonly to: Record<string, unknown>;
  /** The path of the keyword that makes the edge. */
  readonly via: Link | null;
  readonly isRef: boolean;
}

interface SchemaIndex {
  readonly nodes: readonly SchemaNode[];
  readonly byObject: ReadonlyMap<Record<string, unknown>, SchemaNode>;
  /** Each resource's root by its URI, and each anchor by `<resource URI>#<name>`. */
  readonly byUri: ReadonlyMap<string, Record<string, unknown>>;
}

const isSchemaObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

function resolve(ref: string, base: string): string | null {
  try {
    return new URL(ref, base).href;
  } catch {
    return null;
  }
}

const withoutFragment = (uri: string): string => uri.split('#')[0]!;

/**
 * Every schema object of a document, each with its base URI, and the URIs that name resources (`$id`) and
 * anchors (`$anchor`, `$dynamicAnchor`, draft-07 `$id: "#name"`). Iterative: a deeply nested schema cannot
 * overflow the call stack.
 */
function index(root: unknown): SchemaIndex {
  const nodes: SchemaNode[] = [];
  const byObject = new Map<Record<string, unknown>, SchemaNode>();
  const byUri = new Map<string, Record<string, unknown>>();
  if (isSchemaObject(root)) byUri.set(DEFAULT_BASE, root);
  const stack: { readonly node: unknown; readonly path: Link | null; readonly base: string }[] = [
    { node: root, path: null, base: DEFAULT_BASE },
  ];
  while (stack.length > 0) {
    const { node, path, base: parentBase } = stack.pop()!;
    if (!isSchemaObject(node) || byObject.has(node)) continue;
    let base = parentBase;
    const id = typeof node.$id === 'string' ? node.$id : undefined;
    if (id !== undefined && id.startsWith('#')) {
      if (!id.startsWith('#/')) byUri.set(`${base}${id}`, node);
    } else if (id !== undefined) {
      const resolved = resolve(id, base);
      if (resolved !== null) {
        base = withoutFragment(resolved);
        byUri.set(base, node);
      }
    }
    for (const anchor of [node.$anchor, node.$dynamicAnchor])
      if (typeof anchor === 'string') byUri.set(`${base}#${anchor}`, node);
    const entry = { schema: node, path, base };
    nodes.push(entry);
    byObject.set(node, entry);
    for (const [key, value] of Object.entries(node)) {
      if (Array.isArray(value)) {
        if (LIST.has(key)) value.forEach((item, i) => stack.push({ node: item, path: extend(path, [key, i]), base }));
      } else if (ONE.has(key)) {
        stack.push({ node: value, path: extend(path, [key]), base });
      } else if (MAP.has(key) && isSchemaObject(value)) {
        for (const [name, sub] of Object.entries(value))
          stack.push({ node: sub, path: extend(path, [key, name]), base });
      }
    }
  }
  return { nodes, byObject, byUri };
}

/** The schema object a resolved reference names in this document, or undefined (outside it, or nowhere). */
function target(uri: string, byUri: SchemaIndex['byUri']): Record<string, unknown> | undefined {
  const hash = uri.indexOf('#');
  const resource = hash < 0 ? uri : uri.slice(0, hash);
  let fragment = hash < 0 ? '' : uri.slice(hash + 1);
  try {
    fragment = decodeURIComponent(fragment);
  } catch {
    return undefined;
  }
  if (fragment === '') return byUri.get(resource);
  if (!fragment.startsWith('/')) return byUri.get(`${resource}#${fragment}`);
  // A JSON Pointer (RFC 6901) from the resource's root.
  let at: unknown = byUri.get(resource);
  for (const raw of fragment.slice(1).split('/')) {
    const segment = raw.replaceAll('~1', '/').replaceAll('~0', '~');
    if (at === null || typeof at !== 'object' || !Object.hasOwn(at, segment)) return undefined;
    at = (at as Record<string, unknown>)[segment];
  }
  return isSchemaObject(at) ? at : undefined;
}

/** The edges of one schema object to what applies to the same value. */
function edgesOf(node: SchemaNode, byUri: SchemaIndex['byUri']): Edge[] {
  const out: Edge[] = [];
  for (const [key, value] of Object.entries(node.schema)) {
    if (SAME_VALUE_ONE.has(key) && isSchemaObject(value))
      out.push({ to: value, via: extend(node.path, [key]), isRef: false });
    else if (SAME_VALUE_LIST.has(key) && Array.isArray(value))
      value.forEach((item, i) => {
        if (isSchemaObject(item)) out.push({ to: item, via: extend(node.path, [key, i]), isRef: false });
      });
    else if (SAME_VALUE_MAP.has(key) && isSchemaObject(value))
      for (const [name, sub] of Object.entries(value))
        if (isSchemaObject(sub)) out.push({ to: sub, via: extend(node.path, [key, name]), isRef: false });
  }
  for (const keyword of REF_KEYWORDS) {
    const ref = node.schema[keyword];
    const uri = typeof ref === 'string' ? resolve(ref, node.base) : null;
    // A reference outside the document (a meta-schema, a missing one) is not followed: ajv resolves or refuses it.
    const to = uri === null ? undefined : target(uri, byUri);
    if (to !== undefined) out.push({ to, via: extend(node.path, [keyword]), isRef: true });
  }
  return out;
}

/**
 * The path of a reference keyword (`…, "$ref"`) from which the check of one value comes back to the same
 * schema without stepping into a part of the value, or null when every loop steps in (or there is none).
 * Time and memory linear in the schema's size; iterative.
 */
export function sameValueRefLoop(schema: unknown): SchemaPath | null {
  const { nodes, byObject, byUri } = index(schema);
  const state = new Map<Record<string, unknown>, 'open' | 'done'>();
  for (const start of nodes) {
    if (state.has(start.schema)) continue;
    // Depth-first with an explicit stack; `trail[i]` is the edge from `frames[i]` to `frames[i + 1]`.
    const frames: { readonly node: SchemaNode; readonly edges: Edge[]; next: number }[] = [];
    const trail: Edge[] = [];
    const open = (node: SchemaNode) => {
      state.set(node.schema, 'open');
      frames.push({ node, edges: edgesOf(node, byUri), next: 0 });
    };
    open(start);
    while (frames.length > 0) {
      const frame = frames.at(-1)!;
      const edge = frame.edges[frame.next++];
      if (edge === undefined) {
        state.set(frame.node.schema, 'done');
        frames.pop();
        trail.pop();
        continue;
      }
      const seen = state.get(edge.to);
      if (seen === 'done') continue;
      if (seen === 'open') {
        // A loop: the edges from where `edge.to` was opened, then this one. Name its first reference.
        const from = frames.findIndex((f) => f.node.schema === edge.to);
        const loop = [...trail.slice(from), edge];
        return pathOf((loop.find((e) => e.isRef) ?? edge).via);
      }
      const next = byObject.get(edge.to);
      if (next === undefined) continue;
      trail.push(edge);
      open(next);
    }
  }
  return null;
}
