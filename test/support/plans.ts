/**
 * Reading query plans in tests: PostgreSQL's JSON plan format (EXPLAIN (FORMAT JSON), auto_explain with
 * log_format = json), as far as the plan tests read it.
 */
import assert from 'node:assert/strict';
import pg from 'pg';
import type { Db, Prepared, Queryable } from '../../src/adapters/postgres/db.ts';

/** A plan node of PostgreSQL's JSON plan output. */
export interface PlanNode {
  readonly 'Node Type': string;
  readonly 'Relation Name'?: string;
  readonly 'Index Name'?: string;
  readonly 'Subplan Name'?: string;
  readonly Plans?: readonly PlanNode[];
}

/**
 * Whether a plan's relation `name` is `table` or one of its time partitions (`attempts_default`,
 * `delivery_events_p20261207t000000`, `…_legacy`: docs/adr/0030-history-partitions.md).
 */
export const isTable = (name: string | undefined, table: string): boolean =>
  name === table ||
  (name !== undefined &&
    name.startsWith(`${table}_`) &&
    /^(default|legacy|p\d{8}t\d{6})$/.test(name.slice(table.length + 1)));

/** The node and every node under it, depth first. */
export const nodes = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(nodes)];

/** The subtree of the statement's CTE `name`; fails the test when the plan has none. */
export const cte = (plan: PlanNode, name: string): PlanNode => {
  const found = nodes(plan).find((n) => n['Subplan Name'] === `CTE ${name}`);
  assert.ok(found !== undefined, `the plan has CTE ${name}`);
  return found;
};

/**
 * How the subtree reads `table` (default `deliveries`): node type and index, e.g. "Index Scan deliveries_pkey";
 * a bitmap heap scan names the indexes of the bitmap scans under it ("Bitmap Heap Scan deliveries_pkey").
 */
export const deliveryReads = (node: PlanNode, table = 'deliveries'): string[] =>
  nodes(node)
    .filter((n) => isTable(n['Relation Name'], table) && n['Node Type'] !== 'ModifyTable')
    .map((n) => {
      const index =
        n['Node Type'] === 'Bitmap Heap Scan'
          ? nodes(n)
              .flatMap((b) => (b['Index Name'] === undefined ? [] : [b['Index Name']]))
              .join(' ')
          : (n['Index Name'] ?? '');
      return `${n['Node Type']} ${index}`.trim();
    });

/** A plan node as EXPLAIN ANALYZE gives it: the rows each loop returned and the rows its filters removed. */
interface AnalyzedNode extends PlanNode {
  readonly 'Actual Rows'?: number;
  readonly 'Actual Loops'?: number;
  readonly 'Rows Removed by Filter'?: number;
  readonly 'Rows Removed by Index Recheck'?: number;
}

/**
 * The most rows of `table` one read of it in the plan touched: the rows it returned and those its filters removed, over
 * all its loops.
 */
const rowsTouched = (plan: AnalyzedNode, table: string): number =>
  Math.max(
    0,
    ...(nodes(plan) as AnalyzedNode[])
      .filter((n) => isTable(n['Relation Name'], table))
      .map(
        (n) =>
          (n['Actual Rows'] ?? 0) * (n['Actual Loops'] ?? 1) +
          (n['Rows Removed by Filter'] ?? 0) +
          (n['Rows Removed by Index Recheck'] ?? 0),
      ),
  );

/**
 * `base` with each statement that names `table` explained before it runs: `reads` collects how each plan reads
 * the table and the tables `also` ({@link deliveryReads}), `touched` the most rows one read of `table` touched in each
 * read-only statement (EXPLAIN ANALYZE; a statement that writes is explained without running it). Transactions and
 * session statements are not explained.
 */
export function explainingDb(
  base: Db,
  table: string,
  also: readonly string[] = [],
): { db: Db; reads: string[][]; touched: number[] } {
  const reads: string[][] = [];
  const touched: number[] = [];
  const names = new RegExp(`\\b${table}\\b`);
  const wrap = (q: Queryable): Queryable => ({
    async query(text: string | Prepared, params?: readonly unknown[]) {
      const sql = typeof text === 'string' ? text : text.text;
      if (names.test(sql) && !/^\s*(BEGIN|COMMIT|ROLLBACK|SET|SELECT set_config)/i.test(sql)) {
        const readOnly = !/\b(UPDATE|INSERT|DELETE)\b/i.test(sql);
        const plan = await q.query<{ 'QUERY PLAN': { Plan: AnalyzedNode }[] }>(
          `EXPLAIN (${readOnly ? 'ANALYZE, ' : ''}FORMAT JSON) ${sql}`,
          params,
        );
        const root = plan.rows[0]!['QUERY PLAN'][0]!.Plan;
        reads.push([table, ...also].flatMap((name) => deliveryReads(root, name)));
        if (readOnly) touched.push(rowsTouched(root, table));
      }
      return q.query(text, params) as never;
    },
  });
  const db: Db = {
    ...base,
    tx: (fn) => base.tx((client) => fn(wrap(client))),
    query: (text, params) => wrap(base).query(text, params) as never,
  };
  return { db, reads, touched };
}

/** Fails when a collected plan ({@link explainingDb}) scans its table sequentially; `what` names the read. */
export function assertNoScan(reads: readonly string[][], what: string): void {
  assert.ok(reads.length > 0, `${what}: a statement read the table`);
  for (const r of reads) {
    assert.ok(r.length > 0, `${what}: the plan reads the table`);
    assert.ok(!r.some((x) => x.startsWith('Seq Scan')), `${what} reads the table by index: ${r.join(', ')}`);
  }
}

/**
 * The generic plan of `text` (planned once for any parameter values, as on a pool opened with
 * `genericPlans`: src/adapters/postgres/db.ts), read with EXPLAIN EXECUTE of a statement prepared for it in
 * a transaction of its own on one connection of `q` (or of the open transaction `q` is), left as it was.
 */
export async function genericPlan(q: Queryable, text: string, params: readonly unknown[]): Promise<PlanNode> {
  const run = async (c: Queryable): Promise<PlanNode> => {
    await c.query('SAVEPOINT tidings_explain');
    let prepared = false;
    try {
      await c.query('SET LOCAL plan_cache_mode = force_generic_plan');
      await c.query(`PREPARE tidings_explain AS ${text}`);
      prepared = true;
      // EXECUTE takes its arguments as SQL text: each value as pg would send it (pg's own conversion, which
      // its typings do not declare), quoted.
      const { prepareValue } = (pg as unknown as { utils: { prepareValue: (value: unknown) => unknown } }).utils;
      const args = params
        .map((value) => {
          const text = prepareValue(value) as string | Buffer | null;
          return text === null
            ? 'NULL'
            : pg.escapeLiteral(Buffer.isBuffer(text) ? `\\x${text.toString('hex')}` : String(text));
        })
        .join(', ');
      const plan = await c.query<{ 'QUERY PLAN': { Plan: PlanNode }[] }>(
        `EXPLAIN (FORMAT JSON) EXECUTE tidings_explain${params.length > 0 ? `(${args})` : ''}`,
      );
      const root = plan.rows[0]!['QUERY PLAN'][0]!.Plan;
      // A custom plan would name the values; a generic one names the parameters.
      assert.match(JSON.stringify(root), /\$\d/, 'the plan is generic: it names parameters, not values');
      return root;
    } finally {
      // The setting goes with the savepoint; the prepared statement belongs to the session.
      await c.query('ROLLBACK TO SAVEPOINT tidings_explain');
      if (prepared) await c.query('DEALLOCATE tidings_explain');
    }
  };
  return 'tx' in q ? (q as Db).tx(run) : run(q);
}

/**
 * Runs `statement` `times` times on a new connection to `url` with auto_explain loaded for that session
 * (nested statements included, plans sent back as notices) and returns the plans of the statements whose
 * text contains `marker`, in order. Six or more calls of a PL/pgSQL function reach its generic plan: the
 * first five are planned with the call's values.
 */
export async function explainedPlans(
  url: string,
  statement: string,
  times: number,
  marker: string,
): Promise<PlanNode[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const plans: PlanNode[] = [];
  client.on('notice', (notice) => {
    const text = notice.message ?? '';
    const start = text.indexOf('{');
    if (start < 0) return;
    const parsed = JSON.parse(text.slice(start)) as { 'Query Text': string; Plan: PlanNode };
    if (parsed['Query Text'].includes(marker)) plans.push(parsed.Plan);
  });
  try {
    await client.query(`LOAD 'auto_explain'`);
    await client.query(`SET auto_explain.log_min_duration = 0`);
    await client.query(`SET auto_explain.log_nested_statements = on`);
    await client.query(`SET auto_explain.log_format = 'json'`);
    await client.query(`SET auto_explain.log_level = 'notice'`);
    for (let i = 0; i < times; i += 1) await client.query(statement);
  } finally {
    await client.end();
  }
  return plans;
}
