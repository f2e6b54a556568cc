import { parseTree, type Node, type ParseError } from 'jsonc-parser';

/**
 * Payload field equality, the one payload filter of a search (docs/reference/api.md, "Search"). Payloads are
 * encrypted at rest (docs/design.md, Security), so the database cannot compare them: the search decrypts the
 * payloads of a bounded set of candidates and this decides, per payload, whether the field at `path` equals
 * `value`. The payload is read as published (the exact bytes), never re-serialised:
 * - a string field matches the text of `value` (after JSON unescaping: `"caf\u00e9"` matches `café`);
 * - a number, `true`, `false` or `null` matches when its JSON text as published equals `value` (`42` matches
 *   `42`, not `42.0`; an integer beyond 2^53 is compared digit for digit);
 * - an object or an array never matches, nor does a missing field;
 * - a payload that is not JSON (a raw message's body, unless it is JSON text) or an erased one never matches.
 * `path` is a list of object keys; a segment of digits also indexes an array. Of keys given twice in one object,
 * the last counts (as JSON.parse reads it).
 */

/** The longest `payload_field`, in characters, and the most segments it may have. */
export const PAYLOAD_PATH_LIMITS = Object.freeze({ maxLength: 256, maxSegments: 16 } as const);

/** A field path `a.b.0.c` as its segments, or null when it is empty, has an empty segment or is too long or deep. */
export function payloadPath(text: string): readonly string[] | null {
  if (text.length === 0 || text.length > PAYLOAD_PATH_LIMITS.maxLength) return null;
  const segments = text.split('.');
  if (segments.length > PAYLOAD_PATH_LIMITS.maxSegments || segments.some((s) => s === '')) return null;
  return segments;
}

const ARRAY_INDEX = /^(0|[1-9][0-9]{0,8})$/;

/** The value under `segment` of an object (its last property of that name) or array node. */
function child(node: Node, segment: string): Node | undefined {
  if (node.type === 'object') return node.children?.findLast((p) => p.children?.[0]?.value === segment)?.children?.[1];
  if (node.type === 'array' && ARRAY_INDEX.test(segment)) return node.children?.[Number(segment)];
  return undefined;
}

/**
 * Whether the JSON payload `payload` (UTF-8 bytes as published) has `value` at `path` (rules above).
 * Text that is not strict JSON never matches.
 */
export function payloadFieldEquals(payload: Uint8Array, path: readonly string[], value: string): boolean {
  const text = Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength).toString('utf8');
  const errors: ParseError[] = [];
  const root = parseTree(text, errors, { disallowComments: true, allowTrailingComma: false, allowEmptyContent: false });
  if (root === undefined || errors.length > 0) return false;
  let node: Node | undefined = root;
  for (const segment of path) {
    node = node === undefined ? undefined : child(node, segment);
  }
  if (node === undefined) return false;
  if (node.type === 'string') return node.value === value;
  const scalar = node.type === 'number' || node.type === 'boolean' || node.type === 'null';
  return scalar && text.slice(node.offset, node.offset + node.length) === value;
  return false;
}
