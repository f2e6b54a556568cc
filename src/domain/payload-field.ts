import { createScanner } from 'jsonc-parser';

/** jsonc-parser's token kinds (its `SyntaxKind`, a const enum that cannot be imported under this build's rules). */
const SyntaxKind = {
  OpenBraceToken: 1,
  CloseBraceToken: 2,
  OpenBracketToken: 3,
  CloseBracketToken: 4,
  CommaToken: 5,
  ColonToken: 6,
  StringLiteral: 10,
  EOF: 17,
} as const;

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

/** A container on the path being read: an object (its key of the member being read) or an array (its index). */
interface Frame {
  readonly array: boolean;
  key: string | null;
  index: number;
  expectKey: boolean;
}

/** The text of the value at `path` in `text` (strict JSON), by the rules above; null when there is none to compare. */
function scalarAt(text: string, path: readonly string[]): string | null {
  const scanner = createScanner(text, true);
  // `frames` holds only the containers on `path`; `skip` counts the levels of the containers off it being read.
  const frames: Frame[] = [];
  let skip = 0;
  let found: string | null = null;
  let started = false;
  for (let token = scanner.scan(); token !== SyntaxKind.EOF; token = scanner.scan()) {
    const open = token === SyntaxKind.OpenBraceToken || token === SyntaxKind.OpenBracketToken;
    const close = token === SyntaxKind.CloseBraceToken || token === SyntaxKind.CloseBracketToken;
    if (skip > 0) {
      skip += open ? 1 : close ? -1 : 0;
      continue;
    }
    const top = frames.at(-1);
    if (close) {
      frames.pop();
      continue;
    }
    if (token === SyntaxKind.CommaToken) {
      if (top?.array === true) top.index += 1;
      else if (top !== undefined) top.expectKey = true;
      continue;
    }
    if (token === SyntaxKind.ColonToken) continue;
    if (top !== undefined && !top.array && top.expectKey) {
      top.key = scanner.getTokenValue();
      top.expectKey = false;
      continue;
    }
    // A value: the root, or the member or element `top` is reading.
    const depth = frames.length;
    const onPath =
      top === undefined
        ? !started
        : (top.array ? String(top.index) : top.key) === path[depth - 1] && depth <= path.length;
    started = true;
    if (!onPath) skip = open ? 1 : 0;
    else if (depth < path.length) {
      found = null; // a later value of a name on the path replaces what an earlier one held (as JSON.parse reads it)
      if (open) frames.push({ array: token === SyntaxKind.OpenBracketToken, key: null, index: 0, expectKey: true });
    } else if (open) {
      found = null; // an object or an array at the path never matches
      skip = 1;
    } else {
      const at = scanner.getTokenOffset();
      found =
        token === SyntaxKind.StringLiteral ? scanner.getTokenValue() : text.slice(at, at + scanner.getTokenLength());
    }
  }
  return found;
}

/** Whether `text` is strict JSON (`JSON.parse` reads any depth without recursing). */
function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/**
 * Whether the JSON payload `payload` (UTF-8 bytes as published) has `value` at `path` (rules above).
 * Text that is not strict JSON never matches. Iterative, at any depth: the scan keeps the containers on `path`
 * (at most its segments) and a count of the levels off it, so a payload nested 50,000 levels deep is read like
 * any other (no match unless the path leads to a scalar).
 */
export function payloadFieldEquals(payload: Uint8Array, path: readonly string[], value: string): boolean {
  const text = Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength).toString('utf8');
  if (path.length === 0 || !isJson(text)) return false;
  return scalarAt(text, path) === value;
}
