import type { Prepared } from './db.ts';

/**
 * Statements written with named parameters and composed from named pieces, rendered to PostgreSQL's `$n`.
 * A piece is a `sql` template whose values are parameters (`${p.ids}`, from {@link params}) or other pieces; a
 * statement ({@link namedStatement}) numbers its parameters in the order they first appear in its text, and
 * {@link bind} puts the values given by name at those positions. The rendered texts of the hot statements are
 * committed in test/fixtures/sql/ (`npm run sql-fixtures`) so that each variant can be read whole.
 */

/** A named parameter, with what it holds (for the statement's header). */
export interface Param<N extends string = string> {
  readonly name: N;
  readonly doc: string;
}

/** A piece of SQL text with the parameters and pieces it holds, in order. */
export interface Sql<N extends string = string> {
  readonly strings: readonly string[];
  readonly values: readonly (Param<N> | Sql<N>)[];
}

/** A piece of SQL text: `sql\`SELECT ${p.id}::text\``. Values are never put into the text. */
export function sql<N extends string = never>(strings: TemplateStringsArray, ...values: (Param<N> | Sql<N>)[]): Sql<N> {
  return { strings: [...strings], values };
}

/** A constant of the code as SQL text (a channel name, never a value from outside). */
export function raw(text: string): Sql<never> {
  return { strings: [text], values: [] };
}

/** The empty piece, for a part a variant leaves out. */
export const NOTHING: Sql<never> = sql``;

/** `pieces` one after the other, `separator` between them. */
export function joined<N extends string>(pieces: readonly Sql<N>[], separator: string): Sql<N> {
  if (pieces.length === 0) return NOTHING;
  return { strings: ['', ...pieces.slice(1).map(() => separator), ''], values: pieces };
}

/** The parameters of a statement family by name, made by {@link params}. */
export type ParamSet<D> = { readonly [K in keyof D & string]: Param<K> };

/** The parameters of a statement family, by name, each with what it holds: `params({ ids: 'delivery ids' })`. */
export function params<const D extends Readonly<Record<string, string>>>(docs: D): ParamSet<D> {
  const entries = Object.entries(docs).map(([name, doc]) => [name, Object.freeze({ name, doc })] as const);
  return Object.freeze(Object.fromEntries(entries)) as ParamSet<D>;
}

/** What a statement's header says besides its parameters. */
export interface StatementDoc {
  /** What the statement does, in sentences (lines break where written). */
  readonly purpose: string;
  readonly returns: string;
  readonly indexes: string;
}

/** A {@link Prepared} statement rendered from named parameters: `names[i]` is the name of `$i+1`. */
export interface NamedStatement<N extends string = string> extends Prepared {
  readonly names: readonly N[];
  /** The header comment of its fixture: purpose, parameters by position, rows returned, indexes. */
  readonly header: string;
}

/** Widest line of a rendered header. */
const HEADER_WIDTH = 120;

/** `text` after `lead`, in lines of at most {@link HEADER_WIDTH} characters, the next ones indented as `lead` is. */
function wrapped(lead: string, text: string): string[] {
  const lines: string[] = [];
  let line = lead;
  for (const word of text.split(' ')) {
    if (line.length + word.length > HEADER_WIDTH && line.trim() !== lead.trim()) {
      lines.push(line.trimEnd());
      line = `--${' '.repeat(lead.length - 2)}`;
    }
    line += `${word} `;
  }
  return [...lines, line.trimEnd()];
}

const isSql = <N extends string>(value: Param<N> | Sql<N>): value is Sql<N> => 'strings' in value;

/** Renders `body` as statement `name` (unique in the process), numbering its parameters by first appearance. */
export function namedStatement<N extends string>(name: string, doc: StatementDoc, body: Sql<N>): NamedStatement<N> {
  const found: Param<N>[] = [];
  const render = (piece: Sql<N>): string =>
    piece.strings
      .map((text, i) => {
        const value = piece.values[i];
        if (value === undefined) return text;
        if (isSql(value)) return text + render(value);
        let at = found.findIndex((p) => p.name === value.name);
        if (at < 0) at = found.push(value) - 1;
        return `${text}$${at + 1}`;
      })
      .join('');
  const text = render(body);
  const width = Math.max(...found.map((p) => p.name.length));
  const comment = (block: string): string[] => block.split('\n').flatMap((line) => wrapped('-- ', line));
  const header = [
    `-- ${name}`,
    '--',
    ...comment(doc.purpose),
    '--',
    '-- Parameters:',
    ...found.flatMap((p, i) => wrapped(`--   $${String(i + 1).padEnd(3)}${p.name.padEnd(width)}  `, p.doc)),
    '--',
    '-- Rows returned:',
    ...comment(doc.returns),
    '--',
    '-- Indexes:',
    ...comment(doc.indexes),
  ].join('\n');
  return Object.freeze({ name, text, names: Object.freeze(found.map((p) => p.name)), header });
}

/**
 * The parameter values of `statement` in its order, from `values` by name.
 * @throws Error when `values` lacks one of the statement's parameters or names one it does not have
 */
export function bind<N extends string>(
  statement: NamedStatement<N>,
  values: Readonly<Partial<Record<N, unknown>>>,
): unknown[] {
  const given = Object.keys(values);
  if (given.length !== statement.names.length || statement.names.some((name) => !Object.hasOwn(values, name))) {
    const missing = statement.names.filter((name) => !Object.hasOwn(values, name));
    const unknown = given.filter((name) => !statement.names.includes(name as N));
    throw new Error(
      `${statement.name}: parameters missing [${missing.join(', ')}], ` +
        `not in the statement [${unknown.join(', ')}]`,
    );
  }
  return statement.names.map((name) => values[name]);
}
