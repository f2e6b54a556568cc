/**
 * The nesting depth of a parsed JSON body. `JSON.parse` reads any depth (it is iterative), but most code that
 * handles a value afterwards recurses (`JSON.stringify`, `structuredClone`, schema checks, the filter check):
 * a body nested 50,000 levels deep would run each of them out of call stack. The body parser refuses a body
 * deeper than TIDINGS_MAX_JSON_DEPTH (src/http/plugins/json-body.ts), so nothing past it sees one; a pure check
 * that recurses over its input (the payload filter's) asks this first too. Pure.
 */

/** One container on the walk: its depth (the body is level 1), and how it is reached from its parent. */
interface Step {
  readonly value: object;
  readonly depth: number;
  readonly parent: Step | null;
  readonly key: string | number;
}

/** The path from the body's root to `step`'s container. */
function pathOf(step: Step): (string | number)[] {
  const path: (string | number)[] = [];
  for (let s: Step | null = step; s !== null && s.parent !== null; s = s.parent) path.push(s.key);
  return path.reverse();
}

/**
 * The path of the first object or array of `value` nested deeper than `maxDepth` levels (the root container is
 * level 1), or null when none is. Iterative: its own stack holds one entry per container waiting, any depth.
 */
export function tooDeepPath(value: unknown, maxDepth: number): (string | number)[] | null {
  if (typeof value !== 'object' || value === null) return null;
  const stack: Step[] = [{ value, depth: 1, parent: null, key: '' }];
  while (stack.length > 0) {
    const step = stack.pop()!;
    if (step.depth > maxDepth) return pathOf(step);
    if (Array.isArray(step.value)) {
      const items = step.value as unknown[];
      for (let i = items.length - 1; i >= 0; i--) {
        const child = items[i];
        if (typeof child === 'object' && child !== null) {
          stack.push({ value: child, depth: step.depth + 1, parent: step, key: i });
        }
      }
    } else {
      const entries = Object.entries(step.value);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, child] = entries[i]!;
        if (typeof child === 'object' && child !== null) {
          stack.push({ value: child, depth: step.depth + 1, parent: step, key });
        }
      }
    }
  }
  return null;
}
