import type { FastifyInstance } from 'fastify';
import { AppError } from '../../domain/errors.ts';

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * The only request body type: `application/json` (any other → 415 `unsupported_media_type`). The body is
 * read as bytes up to `maxBodyBytes` (beyond → 413), kept on the request (`rawBody`, `rawText`) for the
 * exact payload span and the idempotency fingerprint, and parsed strictly (`JSON.parse`: no comments,
 * no trailing commas).
 * @throws AppError `bad_request` (400) for an empty body, invalid UTF-8 or malformed JSON
 */
export function installJsonBody(app: FastifyInstance, maxBodyBytes: number): void {
  app.decorateRequest('rawBody', null);
  app.decorateRequest('rawText', null);
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'buffer', bodyLimit: maxBodyBytes }, (request, body, done) => {
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
      done(new AppError('bad_request', position === undefined ? 'Malformed JSON' : `Malformed JSON at byte ${position}`, { cause: error }), undefined);
      return;
    }
    request.rawBody = bytes;
    request.rawText = text;
    done(null, value);
  });
}
