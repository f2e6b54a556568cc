/**
 * Reading query plans in tests: PostgreSQL's JSON plan format (EXPLAIN (FORMAT JSON), auto_explain with
 * log_format = json), as far as the plan tests read it.
 */
import assert from 'node:assert/strict';
import pg from 'pg';

/** A plan node of PostgreSQL's JSON plan output. */
export interface PlanNode {
  readonly 'Node Type': string;
  readonly 'Relation Name'?: string;
  readonly 'Index Name'?: string;
  readonly 'Subplan Name'?: string;
  readonly Plans?: readonly PlanNode[];
}

/** The node and every node under it, depth first. */
export const nodes = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(nodes)];

/** The subtree of the statement's CTE `name`; fails the test when the plan has none. */
export const cte = (plan: PlanNode, name: string): PlanNode => {
  const found = nodes(plan).find((n) => n['Subplan Name'] === `CTE ${name}`);
  assert.ok(found !== undefined, `the plan has CTE ${name}`);
  return found;
};

/**
 * How the subtree reads `deliveries`: node type and index, e.g. "Index Scan deliveries_pkey"; a bitmap heap
 * scan names the indexes of the bitmap scans under it ("Bitmap Heap Scan deliveries_pkey").
 */
export const deliveryReads = (node: PlanNode): string[] =>
  nodes(node).filter((n) => n['Relation Name'] === 'deliveries' && n['Node Type'] !== 'ModifyTable').map((n) => {
    const index = n['Node Type'] === 'Bitmap Heap Scan' ? nodes(n).flatMap((b) => (b['Index Name'] === undefined ? [] : [b['Index Name']])).join(' ') : n['Index Name'] ?? '';
    return `${n['Node Type']} ${index}`.trim();
  });

/**
 * Runs `statement` `times` times on a new connection to `url` with auto_explain loaded for that session
 * (nested statements included, plans sent back as notices) and returns the plans of the statements whose
 * text contains `marker`, in order. Six or more calls of a PL/pgSQL function reach its generic plan: the
 * first five are planned with the call's values.
 */
export async function explainedPlans(url: string, statement: string, times: number, marker: string): Promise<PlanNode[]> {
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
