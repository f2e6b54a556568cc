/**
 * deploy/observability stays usable: every metric the Grafana dashboard or an alert rule names is one a
 * live Tidings (API and dispatcher, PostgreSQL server) exports, and the rules pass `promtool check rules`
 * and `promtool test rules` (each alert firing on its series and staying quiet on a short one). promtool
 * comes from Debian's `prometheus` package; without it this test fails, it does not skip.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { after, before, test } from 'node:test';
import { startInProcessWorld, type InProcessWorld } from './support/in-process.ts';

const run = promisify(execFile);
const DIR = fileURLToPath(new URL('../deploy/observability/', import.meta.url));
const HISTOGRAM_SUFFIXES = ['_bucket', '_count', '_sum'];

/** Metric families of a Prometheus text page, with their types (from the `# TYPE` lines). */
function families(text: string): Map<string, string> {
  return new Map([...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => [m[1]!, m[2]!]));
}

/** The Tidings metric names an expression text mentions (histogram series folded into their family). */
function namesIn(text: string, exported: Map<string, string>): Set<string> {
  const out = new Set<string>();
  for (const [name] of text.matchAll(/\btidings_[a-z_]+\b/g)) {
    const suffix = HISTOGRAM_SUFFIXES.find((s) => name.endsWith(s));
    const family = suffix === undefined ? name : name.slice(0, -suffix.length);
    out.add(suffix !== undefined && exported.get(family) === 'histogram' ? family : name);
  }
  return out;
}

async function promtool(...args: string[]): Promise<string> {
  try {
    const { stdout, stderr } = await run('promtool', args, { cwd: DIR, timeout: 60_000 });
    return stdout + stderr;
  } catch (error) {
    const e = error as { code?: string; stdout?: string; stderr?: string };
    if (e.code === 'ENOENT')
      assert.fail("promtool not found: install Debian's prometheus package (apt-get install -y prometheus)");
    assert.fail(`promtool ${args.join(' ')} failed:\n${e.stdout ?? ''}${e.stderr ?? ''}`);
  }
}

let world: InProcessWorld;
before(async () => {
  world = await startInProcessWorld({ TIDINGS_LOG_LEVEL: 'warn' });
});
after(async () => {
  await world?.stop();
});

test('every metric the dashboard and the alert rules name is exported by a live Tidings', async () => {
  const exported = families(await (await fetch(`${world.tidings.apiUrl}/metrics`)).text());
  assert.ok(exported.size > 20, `${exported.size} families`);
  const dashboard = JSON.parse(await readFile(`${DIR}tidings-dashboard.json`, 'utf8')) as {
    panels: { title: string; targets: { expr: string }[] }[];
  };
  const exprs = dashboard.panels.flatMap((p) => p.targets.map((t) => t.expr));
  assert.ok(exprs.length >= 10);
  const rules = await readFile(`${DIR}tidings-alerts.yml`, 'utf8');
  const ruleExprs = [...rules.matchAll(/expr: ([\s\S]*?)\n\s+for:/g)].map((m) => m[1]!);
  assert.equal(ruleExprs.length, 6, 'six alert rules');
  for (const [where, text] of [
    ['dashboard', exprs.join('\n')],
    ['alert rules', ruleExprs.join('\n')],
  ] as const) {
    const named = namesIn(text, exported);
    assert.ok(named.size > 3, `${where} names metrics`);
    const unknown = [...named].filter((n) => !exported.has(n));
    assert.deepEqual(unknown, [], `${where} names metrics Tidings does not export`);
  }
});

test('the alert rules pass promtool check rules and promtool test rules', async () => {
  assert.match(await promtool('check', 'rules', 'tidings-alerts.yml'), /SUCCESS: 6 rules found/);
  assert.match(await promtool('test', 'rules', 'tidings-alerts.test.yml'), /SUCCESS/);
});
