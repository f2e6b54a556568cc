import { AppError } from '../domain/errors.ts';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const COMMA = 0x2c;
const OPEN_OBJECT = 0x7b;
const OPEN_ARRAY = 0x5b;
/** The characters that open, close or quote something in JSON text: all a container's end depends on. */
const STRUCTURAL = /["[\]{}]/g;
/** The end of a number or literal (`true`, `false`, `null`): a delimiter or JSON whitespace (RFC 8259 §2). */
const SCALAR_END = /[,\]} \t\n\r]/g;

/** True for the four characters RFC 8259 §2 allows as insignificant whitespace. */
function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
}

function skipSpace(text: string, at: number): number {
  let i = at;
  while (i < text.length && isSpace(text.charCodeAt(i))) i += 1;
  return i;
}

/**
 * The offset just past the string whose opening quote is at `at`: the first quote not escaped by an odd run of
 * backslashes.
 */
export function stringEnd(text: string, at: number): number {
  let from = at + 1;
  for (;;) {
    const quote = text.indexOf('"', from);
    if (quote < 0) return text.length;
    let slashes = 0;
    while (text.charCodeAt(quote - 1 - slashes) === BACKSLASH) slashes += 1;
    if (slashes % 2 === 0) return quote + 1;
    from = quote + 1;
  }
}

/** The offset just past the value that starts at `at` (no whitespace before it). Iterative: any depth. */
function valueEnd(text: string, at: number): number {
  const first = text.charCodeAt(at);
  if (first === QUOTE) return stringEnd(text, at);
  if (first !== OPEN_OBJECT && first !== OPEN_ARRAY) {
    SCALAR_END.lastIndex = at;
    return SCALAR_END.exec(text)?.index ?? text.length;
  }
  let depth = 0;
  STRUCTURAL.lastIndex = at;
  for (let match = STRUCTURAL.exec(text); match !== null; match = STRUCTURAL.exec(text)) {
    const c = text.charCodeAt(match.index);
    if (c === QUOTE) STRUCTURAL.lastIndex = stringEnd(text, match.index);
    else if (c === OPEN_OBJECT || c === OPEN_ARRAY) depth += 1;
    else if (--depth === 0) return match.index + 1;
  }
  return text.length;
}

/** The key whose quoted form is `text[start, end)`: unescaped only when it holds an escape. */
function keyOf(text: string, start: number, end: number): string {
  const inner = text.slice(start + 1, end - 1);
  return inner.includes('\\') ? (JSON.parse(text.slice(start, end)) as string) : inner;
}

/**
 * The exact bytes of the top-level `payload` value in a JSON request body (docs/design.md#publishing): no parse and
 * re-serialise, so key order, whitespace, number forms and integers beyond 2^53 survive, and the signature
 * is computed over what the publisher sent.
 *
 * `text` must already be valid JSON (RFC 8259): the body parser checked it with `JSON.parse`, so the scan
 * only follows the top-level object's members and skips each value by its quotes and brackets (strings
 * are skipped with `indexOf`, not character by character; docs/adr/0016-hot-path-cost.md has the
 * measurement). Keys are compared unescaped (`"pay\u006coad"` is `payload`, as for `JSON.parse`). Offsets
 * are UTF-16 offsets of `text`; re-encoding the slice as UTF-8 yields the original bytes because `text` was
 * decoded from valid UTF-8. Any nesting depth is accepted, as `JSON.parse` accepts it.
 * @throws AppError `validation` (loc body.payload) when the body is no object, or `payload` is missing or
 *   appears more than once (JSON.parse keeps the last duplicate; an ambiguous body is refused instead)
 */
export function payloadBytes(text: string): Buffer {
  let span: { readonly start: number; readonly end: number } | null = null;
  let duplicated = false;
  let i = skipSpace(text, 0);
  if (text.charCodeAt(i) === OPEN_OBJECT) {
    i = skipSpace(text, i + 1);
    while (i < text.length && text.charCodeAt(i) === QUOTE) {
      const keyEnd = stringEnd(text, i);
      const key = keyOf(text, i, keyEnd);
      i = skipSpace(text, keyEnd);
      if (text.charCodeAt(i) !== COLON) break;
      const start = skipSpace(text, i + 1);
      const end = valueEnd(text, start);
      if (key === 'payload') {
        duplicated ||= span !== null;
        span = { start, end };
      }
      i = skipSpace(text, end);
      const next = text.charCodeAt(i);
      if (next !== COMMA) break;
      i = skipSpace(text, i + 1);
    }
  }
  if (span === null || duplicated) {
    throw new AppError('validation', [
      {
        loc: ['body', 'payload'],
        msg: span === null ? 'field required' : 'the key "payload" appears more than once',
        type: 'value_error',
      },
    ]);
  }
  return Buffer.from(text.slice(span.start, span.end), 'utf8');
}
