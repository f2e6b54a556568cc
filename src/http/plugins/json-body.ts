import type { FastifyInstance } from 'fastify';
import { AppError } from '../../domain/errors.ts';
import { tooDeepPath } from '../../domain/json-depth.ts';
import { ambiguousKey } from '../json-keys.ts';

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** A `\uD800`–`\uDFFF` escape somewhere in the text: only then can a parsed string hold a lone surrogate. */
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F][0-9a-fA-F]{2}/;

/**
 * The path of the first string (or object key) in `value` that holds a lone surrogate — not a Unicode
 * scalar value sequence, so it has no UTF-8 form: stored or sent, it becomes U+FFFD and two different
 * values (two eventIds) become equal. Null when there is none. Depth-first, iterative.
 */
export function loneSurrogatePath(value: unknown): (string | number)[] | null {
  const stack: { readonly v: unknown; readonly path: (string | number)[] }[] = [{ v: value, path: [] }];
  while (stack.length > 0) {
    const { v, path } = stack.pop()!;
    if (typeof v === 'string') {
      if (!v.isWellFormed()) return path;
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ v: v[i], path: [...path, i] });
    } else if (v !== null && typeof v === 'object') {
      for (const [k, child] of Object.entries(v)) {
        if (!k.isWellFormed()) return [...path, k];
        stack.push({ v: child, path: [...path, k] });
      }
    }
  }
  return null;
}

/**
 * The only request body type: `application/json` (any other → 415 `unsupported_media_type`). The body is
 * read as bytes up to `maxBodyBytes` (beyond → 413), kept on the request (`rawBody`, `rawText`) for the
 * exact payload span and the idempotency fingerprint, and parsed strictly (`JSON.parse`: no comments,
 * no trailing commas). A string holding a lone surrogate (`"\ud800"`: JSON text may escape one, RFC 8259
 * §8.2, but it is no Unicode text) is refused, in any field, payload included: it cannot be stored or sent
 * as itself. A key repeated within one object, and a `__proto__` key (or a `constructor` holding a
 * `prototype`), are refused anywhere, payload included (json-keys.ts): `JSON.parse` would drop one silently.
 * An object or array nested deeper than `maxJsonDepth` levels (TIDINGS_MAX_JSON_DEPTH, the body level 1) is
 * refused, payload included (json-depth.ts): the code that handles a value after the parse recurses.
 * @throws AppError `bad_request` (400) for an empty body, invalid UTF-8 or malformed JSON; `validation`
 *   (422, loc naming the field) for a lone surrogate, a duplicate key, a prototype key or a nesting too deep
 */
export function installJsonBody(app: FastifyInstance, maxBodyBytes: number, maxJsonDepth: number): void {
  app.decorateRequest('rawBody', null);
  app.decorateRequest('rawText', null);
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(
    'application/json',
    { parseAs: 'buffer', bodyLimit: maxBodyBytes },
    (request, body, done) => {
      const bytes = body as Buffer;
      let text: string;
      try {
        text = utf8.decode(bytes);
      } catch (error) {
        done(new AppError('bad_request', 'The request body is not valid UTF-8', { cause: error }), undefined);
        return;
      }
      if (text.trim() === '') {
        done(new AppError('bad_request', 'The request body is empty; a JSON value was expected'), undefined);
        return;
      }
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch (error) {
        // Only the position: the parser's own message quotes the body, which may hold a secret.
        const position = /position (\d+)/.exec((error as Error).message)?.[1];
        done(
          new AppError(
            'bad_request',
            position === undefined ? 'Malformed JSON' : `Malformed JSON at byte ${position}`,
            { cause: error },
          ),
          undefined,
        );
        return;
      }
      const deep = tooDeepPath(value, maxJsonDepth);
      if (deep !== null) {
        const msg =
          `nested deeper than ${maxJsonDepth} levels of objects and arrays (TIDINGS_MAX_JSON_DEPTH; ` +
          'the body is level 1)';
        done(new AppError('validation', [{ loc: ['body', ...deep], msg, type: 'value_error.too_deep' }]), undefined);
        return;
      }
      const ambiguous = ambiguousKey(text, value);
      if (ambiguous !== null) {
        const msg =
          ambiguous.reason === 'duplicate'
            ? `the key "${ambiguous.key}" appears more than once in this object (which one counts would be a guess)`
            : `the key "${ambiguous.key}" is refused: JavaScript code that copies this object would take it as ` +
              'its prototype';
        const type = `value_error.${ambiguous.reason === 'duplicate' ? 'duplicate_key' : 'prototype_key'}`;
        done(new AppError('validation', [{ loc: ['body', ...ambiguous.path, ambiguous.key], msg, type }]), undefined);
        return;
      }
      const lone = SURROGATE_ESCAPE.test(text) ? loneSurrogatePath(value) : null;
      if (lone !== null) {
        done(
          new AppError('validation', [
            {
              loc: ['body', ...lone],
              msg: 'a string holds a lone UTF-16 surrogate (\\uD800-\\uDFFF without its pair): it is not Unicode text',
              type: 'value_error.str.surrogate',
            },
          ]),
          undefined,
        );
        return;
      }
      request.rawBody = bytes;
      request.rawText = text;
      done(null, value);
    },
  );
}
