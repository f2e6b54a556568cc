import { parseTree } from 'jsonc-parser';
import { AppError } from '../domain/errors.ts';

/**
 * The exact bytes of the top-level `payload` value in a JSON request body (docs/design.md#publishing): no parse and
 * re-serialise, so key order, whitespace, number forms and integers beyond 2^53 survive, and the signature
 * is computed over what the publisher sent.
 *
 * `text` must already be valid JSON (the body parser checked it with `JSON.parse`); jsonc-parser gives the
 * span in UTF-16 offsets of `text`, and re-encoding that slice as UTF-8 yields the original bytes because
 * `text` was decoded from valid UTF-8.
 * @throws AppError `validation` (loc body.payload) when `payload` is missing or appears more than once
 *   (JSON.parse keeps the last duplicate; an ambiguous body is refused instead)
 */
export function payloadBytes(text: string): Buffer {
  let root: ReturnType<typeof parseTree>;
  try {
    root = parseTree(text);
  } catch (error) {
    // The tree parser recurses: a value nested thousands of levels deep exhausts the stack. Refuse it.
    if (error instanceof RangeError) throw new AppError('validation', [{ loc: ['body', 'payload'], msg: 'the payload is nested too deeply', type: 'value_error' }], { cause: error });
    throw error;
  }
  const matches = (root?.type === 'object' ? root.children ?? [] : []).filter((property) => property.children?.[0]?.value === 'payload');
  if (matches.length !== 1) {
    throw new AppError('validation', [{ loc: ['body', 'payload'], msg: matches.length === 0 ? 'field required' : 'the key "payload" appears more than once', type: 'value_error' }]);
  }
  const value = matches[0]!.children?.[1];
  if (value === undefined) throw new AppError('validation', [{ loc: ['body', 'payload'], msg: 'field required', type: 'value_error' }]);
  return Buffer.from(text.slice(value.offset, value.offset + value.length), 'utf8');
}
