/**
 * The timeline reasons are one catalogue (src/domain/timeline-reasons.ts), described in
 * docs/reference/timeline.md, and the only reasons the timeline statements write: a literal in a statement
 * that inserts into `delivery_events` is either a reason of the catalogue or one of the other words those
 * statements use (states, statuses, breaker states, attempt triggers). A new reason written anywhere in the
 * SQL fails here until it is listed in both places.
 */
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { DeadReason, DeliveryState } from '../src/domain/delivery-state.ts';
import { TimelineReason } from '../src/domain/timeline-reasons.ts';

const root = fileURLToPath(new URL('../', import.meta.url));
const REASONS: readonly string[] = Object.values(TimelineReason);

/**
 * Words of timeline statements that are not reasons: delivery states, endpoint statuses, breaker states, triggers, SQL
 * words and settings.
 */
const OTHER_WORDS = new Set<string>([
  ...Object.values(DeliveryState),
  'active',
  'paused',
  'disabled',
  'closed',
  'open',
  'half_open',
  'breaker_half_open',
  'manual',
  'scheduled',
  'infinity',
  'hex',
  'milliseconds',
  'delivery',
  'endpoint',
  'lock_timeout',
  // The claim by id's verdict per id (claim-ids.sql), returned to the broker source, never a timeline reason.
  'not_due',
  'window',
  'gated',
  'busy',
]);

async function files(dir: string, keep: (path: string) => boolean): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(join(root, dir), { recursive: true, withFileTypes: true })) {
    const path = relative(root, join(entry.parentPath, entry.name));
    if (entry.isFile() && keep(path)) out.push(path);
  }
  return out.sort();
}

/** Each statement that writes timeline rows: a template literal of a TS file, or a whole SQL file. */
async function timelineStatements(): Promise<{ path: string; text: string }[]> {
  const ts = await files('src', (p) => p.endsWith('.ts') && !p.endsWith('.test.ts'));
  const sql = [
    ...(await files('src', (p) => p.endsWith('.sql'))),
    ...(await files('migrations', (p) => p.endsWith('.sql'))),
  ];
  const out: { path: string; text: string }[] = [];
  for (const path of ts) {
    for (const m of (await readFile(join(root, path), 'utf8')).matchAll(/`([^`]*)`/g)) out.push({ path, text: m[1]! });
  }
  for (const path of sql) out.push({ path, text: await readFile(join(root, path), 'utf8') });
  return out.filter((s) => /INSERT INTO delivery_events/i.test(s.text));
}

test('docs/reference/timeline.md lists exactly the reasons of the catalogue, in its order', async () => {
  const page = await readFile(join(root, 'docs/reference/timeline.md'), 'utf8');
  const documented = [...page.matchAll(/^\| `([a-z_]+)` \|/gm)].map((m) => m[1]);
  assert.deepEqual(documented, REASONS, 'update docs/reference/timeline.md or src/domain/timeline-reasons.ts');
});

test("every dead-letter reason is a timeline reason (a dead row carries the delivery's dead_reason)", () => {
  for (const reason of Object.values(DeadReason)) assert.ok(REASONS.includes(reason), reason);
});

test('every literal written by a timeline statement is a catalogued reason or a known non-reason word', async () => {
  const statements = await timelineStatements();
  assert.ok(statements.length >= 8, `found only ${statements.length} timeline statements: has the scan lost them?`);
  const unknown: string[] = [];
  for (const s of statements) {
    for (const m of s.text.matchAll(/'([a-z][a-z_]*)'/g)) {
      const word = m[1]!;
      if (!REASONS.includes(word) && !OTHER_WORDS.has(word)) unknown.push(`${s.path}: '${word}'`);
    }
  }
  assert.deepEqual(
    unknown,
    [],
    'a timeline reason that is not catalogued: add it to src/domain/timeline-reasons.ts and docs/reference/timeline.md',
  );
});

test(
  'every catalogued reason is written somewhere: as a literal of a timeline statement, through TimelineReason, ' +
    'or as a dead-letter reason',
  async () => {
    const literals = new Set<string>();
    for (const s of await timelineStatements())
      for (const m of s.text.matchAll(/'([a-z][a-z_]*)'/g)) literals.add(m[1]!);
    const code = (
      await Promise.all(
        (
          await files('src', (p) => p.endsWith('.ts') && !p.endsWith('.test.ts') && !p.endsWith('timeline-reasons.ts'))
        ).map((p) => readFile(join(root, p), 'utf8')),
      )
    ).join('\n');
    const dead: readonly string[] = Object.values(DeadReason);
    const unused = Object.entries(TimelineReason)
      .filter(
        ([key, value]) => !literals.has(value) && !code.includes(`TimelineReason.${key}`) && !dead.includes(value),
      )
      .map(([, value]) => value);
    assert.deepEqual(unused, [], 'a catalogued reason nothing writes: remove it from the catalogue and the page');
  },
);
