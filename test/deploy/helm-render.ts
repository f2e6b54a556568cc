/**
 * Renders the Helm chart of deploy/helm/tidings/ for the tests, where no Helm binary is available (Debian has no
 * package of it). It implements the part of Go's text/template and of Helm's functions that the chart uses, with
 * Helm's semantics: `{{-` / `-}}` trim whitespace, `define` / `include`, `if` / `else` / `with` / `range` (maps in
 * key order), pipelines, a field of a missing value is an error (as Helm's "nil pointer evaluating"), a missing
 * key prints nothing, and `toYaml` sorts keys and drops the final newline. Anything else in a template throws, so
 * the chart cannot silently use a construct this renderer does not know.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';

type Value = unknown;
type Node =
  | { kind: 'text'; text: string }
  | { kind: 'output'; pipeline: string }
  | { kind: 'if'; branches: { pipeline: string; body: Node[] }[]; otherwise: Node[] }
  | { kind: 'with'; pipeline: string; body: Node[]; otherwise: Node[] }
  | { kind: 'range'; keyVar?: string; valueVar?: string; pipeline: string; body: Node[] }
  | { kind: 'define'; name: string; body: Node[] };
interface Scope {
  dot: Value;
  vars: Map<string, Value>;
}

/** Splits a template into text and actions, applying the trim markers. */
function lex(source: string): ({ kind: 'text'; text: string } | { kind: 'action'; body: string })[] {
  const out: ({ kind: 'text'; text: string } | { kind: 'action'; body: string })[] = [];
  const re = /\{\{(- )?([\s\S]*?)( -)?\}\}/g;
  let last = 0;
  let trimNext = false;
  for (const m of source.matchAll(re)) {
    let text = source.slice(last, m.index);
    if (trimNext) text = text.replace(/^\s+/, '');
    if (m[1] !== undefined) text = text.replace(/\s+$/, '');
    out.push({ kind: 'text', text });
    const body = m[2]!.trim();
    if (!/^\/\*[\s\S]*\*\/$/.test(body)) out.push({ kind: 'action', body });
    trimNext = m[3] !== undefined;
    last = m.index + m[0].length;
  }
  out.push({ kind: 'text', text: trimNext ? source.slice(last).replace(/^\s+/, '') : source.slice(last) });
  return out;
}

/** Builds the tree; `define` blocks go into `defines`. */
function parseTemplate(source: string, defines: Map<string, Node[]>): Node[] {
  const tokens = lex(source);
  let i = 0;
  const block = (): { nodes: Node[]; stop: string } => {
    const nodes: Node[] = [];
    while (i < tokens.length) {
      const token = tokens[i++]!;
      if (token.kind === 'text') {
        if (token.text !== '') nodes.push({ kind: 'text', text: token.text });
        continue;
      }
      const [word] = token.body.split(/\s+/, 1);
      const rest = token.body.slice(word!.length).trim();
      if (word === 'end' || word === 'else') return { nodes, stop: token.body };
      if (word === 'define') {
        const name = JSON.parse(rest) as string;
        defines.set(name, expectEnd(block()));
      } else if (word === 'if') {
        const branches = [{ pipeline: rest, body: [] as Node[] }];
        let otherwise: Node[] = [];
        for (;;) {
          const inner = block();
          branches.at(-1)!.body = inner.nodes;
          if (inner.stop === 'end') break;
          if (inner.stop.startsWith('else if ')) {
            branches.push({ pipeline: inner.stop.slice(8), body: [] });
            continue;
          }
          otherwise = expectEnd(block());
          break;
        }
        nodes.push({ kind: 'if', branches, otherwise });
      } else if (word === 'with') {
        const inner = block();
        nodes.push({
          kind: 'with',
          pipeline: rest,
          body: inner.nodes,
          otherwise: inner.stop === 'end' ? [] : expectEnd(block()),
        });
      } else if (word === 'range') {
        const m = /^(?:(\$\w+)(?:\s*,\s*(\$\w+))?\s*:=\s*)?([\s\S]+)$/.exec(rest)!;
        const [keyVar, valueVar] = m[2] === undefined ? [undefined, m[1]] : [m[1], m[2]];
        nodes.push({
          kind: 'range',
          ...(keyVar ? { keyVar } : {}),
          ...(valueVar ? { valueVar } : {}),
          pipeline: m[3]!,
          body: expectEnd(block()),
        });
      } else if (['template', 'block', 'break', 'continue'].includes(word!) || /^\$\w+\s*:?=/.test(token.body)) {
        throw new Error(`helm-render does not implement {{ ${token.body} }}`);
      } else nodes.push({ kind: 'output', pipeline: token.body });
    }
    return { nodes, stop: '' };
  };
  const expectEnd = (b: { nodes: Node[]; stop: string }): Node[] => {
    if (b.stop !== 'end') throw new Error(`expected {{ end }}, got ${JSON.stringify(b.stop)}`);
    return b.nodes;
  };
  const top = block();
  if (top.stop !== '') throw new Error(`unexpected {{ ${top.stop} }}`);
  return top.nodes;
}

/** Go template truth. */
function truthy(v: Value): boolean {
  if (v === undefined || v === null || v === false || v === 0 || v === '') return false;
  if (Array.isArray(v)) return v.length > 0;
  if (typeof v === 'object') return Object.keys(v).length > 0;
  return true;
}

/** Go's %v of a value as a template prints it (nothing for a missing one). */
function show(v: Value): string {
  if (v === undefined || v === null) return '';
  if (typeof v === 'object') throw new Error(`printing a map or list: ${JSON.stringify(v)} (use toYaml)`);
  return String(v);
}

const indent = (n: number, s: string): string =>
  s
    .split('\n')
    .map((line) => ' '.repeat(n) + line)
    .join('\n');

/** A renderer over one chart's defines. */
class Engine {
  readonly defines = new Map<string, Node[]>();

  run(nodes: Node[], scope: Scope): string {
    let out = '';
    for (const node of nodes) {
      if (node.kind === 'text') out += node.text;
      else if (node.kind === 'output') out += show(this.pipeline(node.pipeline, scope));
      else if (node.kind === 'if') {
        const branch = node.branches.find((b) => truthy(this.pipeline(b.pipeline, scope)));
        out += this.run(branch?.body ?? node.otherwise, scope);
      } else if (node.kind === 'with') {
        const v = this.pipeline(node.pipeline, scope);
        out += truthy(v) ? this.run(node.body, { dot: v, vars: scope.vars }) : this.run(node.otherwise, scope);
      } else if (node.kind === 'range') {
        const v = this.pipeline(node.pipeline, scope);
        const entries: [Value, Value][] = Array.isArray(v)
          ? v.map((x, k) => [k, x])
          : v !== null && typeof v === 'object'
            ? Object.keys(v)
                .sort()
                .map((k) => [k, (v as Record<string, Value>)[k]])
            : [];
        for (const [k, x] of entries) {
          const vars = new Map(scope.vars);
          if (node.keyVar) vars.set(node.keyVar, k);
          if (node.valueVar) vars.set(node.valueVar, x);
          out += this.run(node.body, { dot: x, vars });
        }
      }
    }
    return out;
  }

  /** Evaluates `a | f b | g` (each stage gets the previous result as its last argument). */
  pipeline(text: string, scope: Scope): Value {
    let result: Value;
    let first = true;
    for (const stage of splitTop(tokenize(text), '|')) {
      result = this.command(stage, scope, first ? [] : [result]);
      first = false;
    }
    return result;
  }

  command(tokens: string[], scope: Scope, piped: Value[]): Value {
    const head = tokens[0]!;
    if (/^[A-Za-z]\w*$/.test(head) && !['true', 'false', 'nil'].includes(head)) {
      const args = this.operands(tokens.slice(1), scope);
      return this.call(head, [...args, ...piped], scope);
    }
    const values = this.operands(tokens, scope);
    if (values.length !== 1 || piped.length > 0) throw new Error(`cannot evaluate ${tokens.join(' ')}`);
    return values[0];
  }

  operands(tokens: string[], scope: Scope): Value[] {
    const out: Value[] = [];
    for (let i = 0; i < tokens.length; i++) {
      const t = tokens[i]!;
      if (t === '(') {
        let depth = 1;
        let j = i + 1;
        for (; depth > 0; j++) depth += tokens[j] === '(' ? 1 : tokens[j] === ')' ? -1 : 0;
        out.push(this.pipeline(tokens.slice(i + 1, j - 1).join(' '), scope));
        i = j - 1;
      } else if (t.startsWith('"')) out.push(JSON.parse(t));
      else if (/^-?\d+(\.\d+)?$/.test(t)) out.push(Number(t));
      else if (t === 'true' || t === 'false') out.push(t === 'true');
      else if (t === 'nil') out.push(null);
      else if (t.startsWith('.') || t.startsWith('$')) {
        const [base, ...path] = t.startsWith('.')
          ? [
              '.',
              ...t
                .slice(1)
                .split('.')
                .filter((p) => p !== ''),
            ]
          : t.split('.');
        let v = base === '.' ? scope.dot : scope.vars.get(base!);
        if (base !== '.' && !scope.vars.has(base!)) throw new Error(`undefined variable ${base}`);
        for (const key of path) {
          if (v === undefined || v === null) throw new Error(`nil pointer evaluating ${t} at .${key}`);
          v = (v as Record<string, Value>)[key];
        }
        out.push(v);
      } else throw new Error(`unknown operand ${t}`);
    }
    return out;
  }

  call(name: string, args: Value[], _scope: Scope): Value {
    const str = (v: Value): string => show(v);
    switch (name) {
      case 'include': {
        const body = this.defines.get(args[0] as string);
        if (body === undefined) throw new Error(`no template named ${String(args[0])}`);
        return this.run(body, { dot: args[1], vars: new Map([['$', args[1]]]) });
      }
      case 'quote':
        return args.map((a) => JSON.stringify(str(a))).join(' ');
      case 'toString':
        return str(args[0]);
      case 'toYaml':
        return args[0] === undefined || args[0] === null
          ? 'null'
          : stringify(args[0], { sortMapEntries: true }).replace(/\n$/, '');
      case 'nindent':
        return '\n' + indent(args[0] as number, str(args[1]));
      case 'indent':
        return indent(args[0] as number, str(args[1]));
      case 'default':
        return truthy(args[1]) ? args[1] : args[0];
      case 'add':
        return args.reduce<number>((sum, a) => sum + Math.trunc(Number(a)), 0);
      case 'printf': {
        let k = 1;
        return (args[0] as string).replace(/%[sd]/g, (f) =>
          f === '%d' ? String(Math.trunc(Number(args[k++]))) : str(args[k++]),
        );
      }
      case 'trunc':
        return str(args[1]).slice(0, args[0] as number);
      case 'trimSuffix':
        return str(args[1]).endsWith(args[0] as string)
          ? str(args[1]).slice(0, -(args[0] as string).length)
          : str(args[1]);
      case 'not':
        return !truthy(args[0]);
      case 'eq':
        return args[0] === args[1];
      case 'required':
        if (!truthy(args[1])) throw new Error(`required: ${String(args[0])}`);
        return args[1];
      default:
        throw new Error(`helm-render does not implement the function ${name}`);
    }
  }
}

/** Tokens of a pipeline: strings, parentheses, pipes and words. */
function tokenize(text: string): string[] {
  return [...text.matchAll(/"(?:[^"\\]|\\.)*"|[()|]|[^\s()|"]+/g)].map((m) => m[0]);
}

function splitTop(tokens: string[], separator: string): string[][] {
  const out: string[][] = [[]];
  let depth = 0;
  for (const t of tokens) {
    depth += t === '(' ? 1 : t === ')' ? -1 : 0;
    if (t === separator && depth === 0) out.push([]);
    else out.at(-1)!.push(t);
  }
  return out;
}

function merge(base: Value, over: Value): Value {
  if (over === undefined) return base;
  if (
    base === null ||
    typeof base !== 'object' ||
    Array.isArray(base) ||
    over === null ||
    typeof over !== 'object' ||
    Array.isArray(over)
  )
    return over;
  const out: Record<string, Value> = { ...(base as Record<string, Value>) };
  for (const [k, v] of Object.entries(over)) out[k] = merge(out[k], v);
  return out;
}

/**
 * Renders every template of the chart in `chartDir` (files of templates/ not starting with `_`, NOTES.txt
 * included) with values.yaml merged with `values`. Returns file name → rendered text.
 */
export function renderChart(
  chartDir: string,
  values: Record<string, unknown> = {},
  release = { Name: 'hooks', Namespace: 'default' },
): Map<string, string> {
  const chart = parse(readFileSync(join(chartDir, 'Chart.yaml'), 'utf8')) as Record<string, unknown>;
  const Chart = Object.fromEntries(Object.entries(chart).map(([k, v]) => [k[0]!.toUpperCase() + k.slice(1), v]));
  const root = {
    Values: merge(parse(readFileSync(join(chartDir, 'values.yaml'), 'utf8')), values),
    Release: { ...release, Service: 'Helm', IsInstall: true, IsUpgrade: false },
    Chart,
  };
  const engine = new Engine();
  const dir = join(chartDir, 'templates');
  const files = readdirSync(dir).sort();
  const trees = new Map(
    files.map((file) => [file, parseTemplate(readFileSync(join(dir, file), 'utf8'), engine.defines)]),
  );
  const out = new Map<string, string>();
  for (const [file, tree] of trees) {
    if (file.startsWith('_')) continue;
    out.set(file, engine.run(tree, { dot: root, vars: new Map([['$', root]]) }));
  }
  return out;
}
