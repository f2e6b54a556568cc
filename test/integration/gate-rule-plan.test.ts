/**
 * The endpoint's gate rule is written once (migration 1764000010000: tidings_endpoint_accepting and
 * tidings_endpoint_ungated) and read by the claim and the publish statement's hand-off; the planner inlines both
 * functions, so each plan is the plan of the same statement with the functions' bodies written out in place (as the
 * statements were written before the rule had a name): the same nodes, indexes, filters and outputs, and no call
 * of a function left in any of them. A function it could not inline would show as a call per endpoint row.
 * PostgreSQL server: the claim's inner queries are read with auto_explain (verbose), the hand-off's statement with
 * EXPLAIN (VERBOSE).
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, test } from 'node:test';
import pg from 'pg';
import type { Queryable } from '../../src/adapters/postgres/db.ts';
import { PUBLISH_HANDING } from '../../src/adapters/postgres/message/publish-sql.ts';
import { bind } from '../../src/adapters/postgres/named-sql.ts';
import { testCipher } from '../support/cipher.ts';
import { freshServerDatabase, type TestDatabase } from '../support/db.ts';
import { insertApp, insertEndpoint } from '../support/fixtures.ts';

let t: TestDatabase;
let appId: string;
const endpoints: string[] = [];
before(async () => {
  t = await freshServerDatabase();
  const cipher = testCipher();
  appId = await insertApp(t.db);
  // Every kind the rule tells apart: ungated, capped, rate-limited, breaker open (cool-down over), throttled, paused.
  const kinds = [
    '',
    'max_in_flight = 2',
    'rate_limit_per_s = 5',
    `breaker_state = 'open', breaker_open_until = now() - interval '1 s'`,
    `throttled_until = now() + interval '1 h'`,
    `status = 'paused'`,
  ];
  for (const kind of kinds) {
    const id = (await insertEndpoint(t.db, cipher, { appId, url: 'http://127.0.0.1:9/' })).id;
    if (kind !== '') await t.db.query(`UPDATE endpoints SET ${kind} WHERE id = $1`, [id]);
    endpoints.push(id);
  }
  await t.db.query(
    `INSERT INTO messages (id, app_id, event_type, payload, payload_key_id)
                    SELECT 'msg_gate' || lpad(i::text, 8, '0'), $1, 'e', '\\x7b7d', 'plain'
                    FROM generate_series(1, 60) i`,
    [appId],
  );
  await t.db.query(
    `INSERT INTO deliveries (app_id, message_id, endpoint_id, state, next_attempt_at)
                    SELECT $1, 'msg_gate' || lpad(i::text, 8, '0'), ($2::text[])[1 + i % cardinality($2::text[])],
                           'pending', now() - interval '1 minute'
                    FROM generate_series(1, 60) i`,
    [appId, endpoints],
  );
  await t.db.query('ANALYZE');
});
after(async () => {
  await t.drop();
});

/** The rule's functions: the gate rule (1764000010000) and the gate and rank steps of both claims (1764000016000). */
const RULES = [
  'tidings_endpoint_accepting',
  'tidings_endpoint_ungated',
  'tidings_endpoint_claimable',
  'tidings_endpoint_gate_lock',
  'tidings_endpoint_tokens',
  'tidings_endpoint_room',
  'tidings_endpoint_reclaimable',
  'tidings_window_allowance',
];
const RULE_CALL = /tidings_(endpoint|window)_\w+\(/;

/** The bodies of the rule's functions as the database holds them, `(ep).` read as `<alias>.`. */
async function bodies(q: Queryable): Promise<Map<string, { params: string[]; body: string }>> {
  const rows = (
    await q.query<{ name: string; params: string[]; body: string }>(
      `SELECT proname AS name, proargnames AS params, prosrc AS body FROM pg_proc WHERE proname = ANY ($1)`,
      [RULES],
    )
  ).rows;
  assert.equal(rows.length, RULES.length, 'every function exists');
  return new Map(rows.map((r) => [r.name, { params: r.params, body: r.body.trim().replace(/^SELECT\s+/i, '') }]));
}

/**
 * `sql` with every call of the functions replaced by its body, its arguments put in place of its parameters, until no
 * call is left (a body may call another of them).
 */
function writtenOut(sql: string, fns: Map<string, { params: string[]; body: string }>): string {
  let out = sql;
  for (let pass = 0; pass < 4 && RULE_CALL.test(out); pass++) out = writtenOutOnce(out, fns);
  return out;
}

function writtenOutOnce(sql: string, fns: Map<string, { params: string[]; body: string }>): string {
  let out = sql;
  for (const [name, fn] of fns) {
    for (let at = out.indexOf(`${name}(`); at >= 0; at = out.indexOf(`${name}(`, at)) {
      // The arguments, split at the top-level commas up to the matching parenthesis.
      const args: string[] = [];
      let depth = 0;
      let start = at + name.length + 1;
      let end = start;
      for (; depth >= 0; end++) {
        const c = out[end];
        if (c === '(') depth++;
        else if (c === ')') depth--;
        if ((c === ',' && depth === 0) || depth < 0) {
          args.push(out.slice(start, end).trim());
          start = end + 1;
        }
      }
      let body = fn.body;
      for (const [i, param] of fn.params.entries()) {
        const alone = new RegExp(`\\b${param}\\b(?!\\.)`, 'g');
        body = body.replaceAll(`(${param}).`, `${args[i]}.`).replace(alone, args[i]!);
      }
      out = `${out.slice(0, at)}(${body})${out.slice(end)}`;
      at += body.length;
    }
  }
  return out;
}

/** A plan without its estimates, which a second run over changed rows may move, nor the gate's instant (a constant). */
const shape = (plan: unknown): string =>
  JSON.stringify(plan, (key, value: unknown) =>
    ['Startup Cost', 'Total Cost', 'Plan Rows', 'Plan Width'].includes(key) ? undefined : value,
  ).replace(/'\d{4}-\d\d-\d\d [\d:.+]+'::timestamp with time zone/g, 'INSTANT');

/** The plans of the inner queries of `call`, run once in a transaction rolled back, with auto_explain (verbose). */
async function innerPlans(call: string): Promise<unknown[]> {
  const client = new pg.Client({ connectionString: t.url! });
  await client.connect();
  const plans: unknown[] = [];
  client.on('notice', (notice) => {
    const text = notice.message ?? '';
    const start = text.indexOf('{');
    if (start < 0) return;
    const parsed = JSON.parse(text.slice(start)) as { 'Query Text': string; Plan: unknown };
    // The call itself and the foreign-key checks of the rows it writes are not the claim's queries.
    const query = parsed['Query Text'];
    if (!query.includes(call) && !query.startsWith('SELECT 1 FROM ONLY')) plans.push(parsed.Plan);
  });
  try {
    const settings = [
      'log_min_duration = 0',
      'log_nested_statements = on',
      `log_format = 'json'`,
      `log_level = 'notice'`,
      'log_verbose = on',
    ];
    for (const setting of settings) await client.query(`SET auto_explain.${setting}`);
    await client.query(`LOAD 'auto_explain'`);
    await client.query('BEGIN');
    await client.query(call);
    await client.query('ROLLBACK');
  } finally {
    await client.end();
  }
  return plans;
}

/** The plans of `fn` (a routine file) and of its copy with the rule written out agree; no call of the rule is left. */
async function samePlansWrittenOut(file: string, fn: string, call: string, queries: number): Promise<unknown[]> {
  const sql = await readFile(new URL(`../../src/adapters/postgres/delivery/${file}`, import.meta.url), 'utf8');
  assert.match(sql, /tidings_endpoint_ungated\(e\)/, 'the claim reads the rule');
  assert.match(sql, /tidings_endpoint_room\(/, 'the claim reads the shared rank step');
  const reference = writtenOut(sql, await bodies(t.db)).replace(`FUNCTION ${fn}(`, `FUNCTION ${fn}_written_out(`);
  assert.doesNotMatch(reference, RULE_CALL);
  await t.db.query(reference);
  const withRule = await innerPlans(`SELECT id FROM ${fn}${call}`);
  const written = await innerPlans(`SELECT id FROM ${fn}_written_out${call}`);
  assert.equal(withRule.length, queries, 'two inner queries: the gate and the claim');
  assert.deepEqual(withRule.map(shape), written.map(shape));
  const text = JSON.stringify(withRule);
  assert.doesNotMatch(text, /tidings_(endpoint|window)_/, 'inlined: no call of the functions in the plans');
  assert.match(text, /max_in_flight IS NULL/, "the rule's columns are read in place");
  assert.match(text, /pg_try_advisory_xact_lock/, "the gate's lock is taken in place");
  return withRule;
}

test('the claim plans the gate rule as if written out in place: same gate and claim plans, no call left', async () => {
  await samePlansWrittenOut(
    'claim.sql',
    'tidings_claim',
    `('W', 10, 30000, NULL, 5, '{}', 10, '{}', '{}', '{}', '{}', 10)`,
    2,
  );
});

test(
  'the claim by id plans the same rule as written out in ' + 'place: same gate and claim plans, no call left',
  async () => {
    const ids = (await t.db.query<{ id: string }>('SELECT id FROM deliveries ORDER BY id LIMIT 20')).rows.map(
      (r) => r.id,
    );
    const call = `('W', '{${ids.join(',')}}', 30000, NULL, 5, '{}', 10, '{}', '{}', '{}', '{}', 10)`;
    await samePlansWrittenOut('claim-ids.sql', 'tidings_claim_ids', call, 2);
  },
);

test('the hand-off plans the gate rule as written out in place: same plan of its statement, no call left', async () => {
  const values = {
    id: ['msg_gate_handoff'],
    app_id: [appId],
    event_id: [null],
    event_type: ['e'],
    channels: [null],
    tags: [null],
    payload_start: [0],
    payload_end: [2],
    payload_key_id: ['plain'],
    retention_hours: [null],
    at: [null],
    content_type: [null],
    deliver_at: [null],
    trace_context: [null],
    app_ref: [null],
    type_revision: [null],
    filter_revision: [null],
    filtered_out: [null],
    payloads: Buffer.from('{}'),
    notify: false,
    notify_always: false,
    dispatcher: 'W',
    lease_ms: 30_000,
    slots: 10,
    room_endpoints: endpoints,
    room: endpoints.map(() => 5),
  };
  const params = bind(PUBLISH_HANDING, values);
  const explain = async (text: string): Promise<unknown> =>
    (
      await t.db.query<{ 'QUERY PLAN': { Plan: unknown }[] }>(
        `EXPLAIN (VERBOSE, COSTS OFF, FORMAT JSON) ${text}`,
        params,
      )
    ).rows[0]!['QUERY PLAN'][0]!.Plan;
  assert.match(PUBLISH_HANDING.text, /tidings_endpoint_ungated\(e\)/, 'the hand-off reads the rule');
  const withRule = await explain(PUBLISH_HANDING.text);
  const written = await explain(writtenOut(PUBLISH_HANDING.text, await bodies(t.db)));
  assert.deepEqual(shape(withRule), shape(written));
  assert.doesNotMatch(
    JSON.stringify(withRule),
    /tidings_(endpoint|window)_/,
    'inlined: no call of the functions in the plan',
  );
});
