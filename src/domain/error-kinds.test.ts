import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { classifyAttempt } from './attempt-outcome.ts';
import { ERROR_KINDS, ErrorKind } from './error-kinds.ts';

const DOC_PATH = new URL('../../docs/reference/error-kinds.md', import.meta.url);

/** The rows of the table in docs/reference/error-kinds.md: `| \`kind\` | cause | retried |`. */
function documentedKinds(): { kind: string; cause: string; retried: string }[] {
  const rows: { kind: string; cause: string; retried: string }[] = [];
  for (const line of readFileSync(DOC_PATH, 'utf8').split('\n')) {
    const match = /^\|\s*`([a-z_]+)`\s*\|\s*(.*?)\s*\|\s*(.*?)\s*\|\s*$/.exec(line);
    if (match !== null) rows.push({ kind: match[1] ?? '', cause: match[2] ?? '', retried: match[3] ?? '' });
  }
  return rows;
}

test(
  'docs/reference/error-kinds.md lists every error kind of ERROR_KINDS, in order, each with a cause and a retry ' +
    'rule',
  () => {
    const documented = documentedKinds();
    assert.deepEqual(
      documented.map((r) => r.kind),
      [...ERROR_KINDS],
      'kinds (missing, extra or reordered)',
    );
    for (const row of documented) {
      assert.match(row.cause, /^[A-Z].*\.$/, `${row.kind}: the cause is a sentence`);
      assert.match(row.retried, /^(Yes|No)\b/, `${row.kind}: "Retried" starts with Yes or No`);
    }
  },
);

test('the "Retried" column agrees with classifyAttempt for every transport error kind', () => {
  for (const row of documentedKinds()) {
    if (row.kind === ErrorKind.httpStatus || row.kind === ErrorKind.redirect) continue; // decided by a status code
    const { verdict } = classifyAttempt({ type: 'error', errorKind: row.kind as ErrorKind, detail: '', durationMs: 0 });
    assert.equal(
      row.retried.startsWith('Yes'),
      verdict === 'retryable',
      `${row.kind}: doc says "${row.retried}", classifyAttempt says ${verdict}`,
    );
  }
  const gone = classifyAttempt({
    type: 'response',
    statusCode: 410,
    location: null,
    retryAfter: null,
    bodyPrefix: '',
    bodyError: null,
    durationMs: 0,
  });
  assert.equal(gone.verdict, 'gone');
  const doc = documentedKinds().find((r) => r.kind === ErrorKind.httpStatus);
  assert.ok(doc?.retried.includes('410'), 'http_status names the 410 exception');
  const redirect = classifyAttempt({
    type: 'response',
    statusCode: 302,
    location: '/x',
    retryAfter: null,
    bodyPrefix: '',
    bodyError: null,
    durationMs: 0,
  });
  assert.deepEqual([redirect.verdict, redirect.errorKind], ['retryable', ErrorKind.redirect]);
});

test('ERROR_KINDS is frozen, snake_case and without duplicates', () => {
  assert.ok(Object.isFrozen(ERROR_KINDS));
  assert.equal(new Set(ERROR_KINDS).size, ERROR_KINDS.length);
  for (const kind of ERROR_KINDS) assert.match(kind, /^[a-z]+(_[a-z]+)*$/);
});
