/** Route patterns of the console and portal: plain functions of the address (unit tests beside them). */

/**
 * Matches `pattern` (`/apps/:app/endpoints`; a last segment `*` takes one or more segments) against `path` (its
 * `?query` ignored); answers the parameters (percent-decoded) or null.
 */
export function match(pattern: string, path: string): Record<string, string> | null {
  const p = pattern.split('/');
  const s = path.split('?')[0]!.split('/');
  const rest = p[p.length - 1] === '*';
  if (rest ? s.length < p.length : p.length !== s.length) return null;
  const out: Record<string, string> = {};
  for (let i = 0; i < (rest ? p.length - 1 : p.length); i++) {
    const part = p[i]!;
    if (part.startsWith(':')) out[part.slice(1)] = decodeURIComponent(s[i]!);
    else if (part !== s[i]) return null;
  }
  return out;
}

/** One address of a route table: its pattern and what it shows, given the parameters and the context `C`. */
export interface Route<V, C = undefined> {
  readonly pattern: string;
  readonly show: (params: Record<string, string>, context: C) => V;
}

/** The first route of `routes` whose pattern matches `path`, with its parameters; null when none does. */
export function pick<R extends { readonly pattern: string }>(
  routes: readonly R[],
  path: string,
): { route: R; params: Record<string, string> } | null {
  for (const route of routes) {
    const params = match(route.pattern, path);
    if (params !== null) return { route, params };
  }
  return null;
}

/** `href` of a route. */
export const href = (path: string): string => `#${path}`;

/** A route segment (an id or name in a console or portal address), percent-encoded. */
export const seg = (s: string): string => encodeURIComponent(s);
