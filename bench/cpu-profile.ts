import { readFile } from 'node:fs/promises';

interface ProfileNode {
  readonly id: number;
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
}
interface CpuProfile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
  readonly startTime: number;
  readonly endTime: number;
}

/** Self time of a V8 CPU profile grouped by area (package, src folder, GC, idle) and by function. Times in ms. */
export interface ProfileSummary {
  readonly file: string;
  readonly totalMs: number;
  /** Self time without `(idle)`: the CPU the process used while profiled. */
  readonly busyMs: number;
  readonly byArea: readonly { readonly area: string; readonly ms: number; readonly share: number }[];
  readonly topFunctions: readonly { readonly fn: string; readonly ms: number; readonly share: number }[];
}

/** The area of a profile frame: `(garbage collector)`, `node internals`, an npm package, or a src/ folder. */
function areaOf(frame: ProfileNode['callFrame']): string {
  const { url, functionName } = frame;
  if (url === '') return functionName.startsWith('(') ? functionName : '(native)';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg !== null) return pkg[1]!;
  if (url.startsWith('node:')) return 'node internals';
  const src = /\/(src\/[^/]+(?:\/[^/]+)?)\//.exec(url);
  if (src !== null) return src[1]!;
  const bench = /\/bench\//.exec(url);
  return bench !== null ? 'bench' : url;
}

/**
 * Reads a `.cpuprofile` written by `node --cpu-prof` and sums self time per area and per function.
 * @throws Error when the file cannot be read or parsed
 */
export async function summarizeProfile(file: string, top = 25): Promise<ProfileSummary> {
  const profile = JSON.parse(await readFile(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const areas = new Map<string, number>();
  const fns = new Map<string, number>();
  let total = 0;
  let idle = 0;
  for (const [id, us] of selfUs) {
    const frame = byId.get(id)?.callFrame;
    if (frame === undefined) continue;
    total += us;
    if (frame.functionName === '(idle)') {
      idle += us;
      continue;
    }
    const area = areaOf(frame);
    areas.set(area, (areas.get(area) ?? 0) + us);
    const short = frame.url.replace(/^.*\/(node_modules|src|bench)\//, '$1/').replace(/^file:\/\//, '');
    const fn = `${frame.functionName || '(anonymous)'} ${short}${frame.url === '' ? '' : `:${frame.lineNumber + 1}`}`;
    fns.set(fn, (fns.get(fn) ?? 0) + us);
  }
  const busy = total - idle;
  const rank = (m: Map<string, number>) => [...m.entries()].sort((a, b) => b[1] - a[1]);
  return {
    file,
    totalMs: Math.round(total / 1000),
    busyMs: Math.round(busy / 1000),
    byArea: rank(areas)
      .slice(0, 20)
      .map(([area, us]) => ({
        area,
        ms: Math.round(us / 1000),
        share: Math.round((1000 * us) / Math.max(1, busy)) / 10,
      })),
    topFunctions: rank(fns)
      .slice(0, top)
      .map(([fn, us]) => ({ fn, ms: Math.round(us / 1000), share: Math.round((1000 * us) / Math.max(1, busy)) / 10 })),
  };
}
