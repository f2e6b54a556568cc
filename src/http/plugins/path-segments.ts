import type { FastifyInstance } from 'fastify';
import { AppError } from '../../domain/errors.ts';
import { isDotSegment } from '../schemas/common.ts';

/** Paths of the API whose segments name objects. */
const API_PREFIX = '/api/';

/** A segment as a URL parser reads it: `%2e` is `.` (WHATWG URL, "single-dot / double-dot URL path segment"). */
const asParsed = (segment: string): string => segment.replace(/%2e/gi, '.');

/**
 * The first segment of `path` that cannot name an object: an empty one (`//`, or the empty segment after a
 * trailing `/`) or a dot segment (`.`, `..`, also written `%2e`). Null when every segment is a name.
 */
export function unnamedSegment(path: string): string | null {
  const segments = path.split('/').slice(1);
  for (const segment of segments) if (segment === '' || isDotSegment(asParsed(segment))) return segment;
  return null;
}

/**
 * Refuses, with 404 `not_found` and before any credential is looked up, an API request whose path has an
 * empty segment or a dot segment. A client removes dot segments before it sends (`DELETE …/endpoint/..`
 * leaves as `DELETE /api/v1/app/app/`), and the router ignores a trailing slash for the console's sake: an
 * object named `..` would turn a request on it into one on its parent. Names are refused at write time
 * (schemas/common.ts `isDotSegment`); this hook makes sure no shortened path reaches a route, whatever wrote
 * the name or sent the request (an older row, a raw `%2e%2e`).
 */
export function installPathSegmentCheck(app: FastifyInstance): void {
  app.addHook('onRequest', async (request) => {
    const path = request.url.split('?', 1)[0] ?? '';
    if (!path.startsWith(API_PREFIX)) return;
    const segment = unnamedSegment(path);
    if (segment === null) return;
    const what = segment === '' ? 'an empty path segment (a trailing or doubled "/")' : `the dot segment "${segment}"`;
    throw new AppError('not_found', `No route ${request.method} ${path}: ${what} names no object`);
  });
}
