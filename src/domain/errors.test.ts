import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { AppError, ERROR_CATALOG, notFound, type ErrorCode } from './errors.ts';

const DOC_PATH = new URL('../../docs/reference/errors.md', import.meta.url);

/** The rows of the code table in docs/reference/errors.md: `| \`code\` | status | meaning |`. */
function documentedCodes(): { code: string; status: number; meaning: string }[] {
  const rows: { code: string; status: number; meaning: string }[] = [];
  for (const line of readFileSync(DOC_PATH, 'utf8').split('\n')) {
    const match = /^\|\s*`([^`]+)`\s*\|\s*(\d{3})\s*\|\s*(.*?)\s*\|\s*$/.exec(line);
    if (match !== null) rows.push({ code: match[1] ?? '', status: Number(match[2]), meaning: match[3] ?? '' });
  }
  return rows;
}

test('docs/reference/errors.md lists every code of ERROR_CATALOG, in order, with its status and meaning', () => {
  const documented = documentedCodes();
  const catalog = Object.entries(ERROR_CATALOG).map(([code, entry]) => ({
    code,
    status: entry.status,
    meaning: entry.description,
  }));
  assert.deepEqual(
    documented.map((r) => r.code),
    catalog.map((r) => r.code),
    'codes (missing, extra or reordered)',
  );
  assert.deepEqual(documented, catalog, 'status or meaning differs between the catalog and the doc');
});

test('every catalog code is snake_case with a 4xx or 5xx status and a sentence', () => {
  for (const [code, entry] of Object.entries(ERROR_CATALOG)) {
    assert.match(code, /^[a-z]+(_[a-z]+)*$/, code);
    assert.ok(entry.status >= 400 && entry.status <= 599, `${code}: ${entry.status}`);
    assert.match(entry.description, /^[A-Z].*\.$/, `${code}: description is a sentence`);
  }
  assert.ok(Object.isFrozen(ERROR_CATALOG));
});

test('AppError takes its status from the catalog and keeps code, detail, headers and cause', () => {
  for (const code of Object.keys(ERROR_CATALOG) as ErrorCode[]) {
    const error = new AppError(code, 'something');
    assert.equal(error.status, ERROR_CATALOG[code].status, code);
    assert.equal(error.code, code);
    assert.equal(error.name, 'AppError');
    assert.ok(error instanceof Error);
  }
  const cause = new Error('duplicate key value violates unique constraint');
  const conflict = new AppError('conflict', 'eventId already used', { cause, headers: { 'retry-after': '1' } });
  assert.equal(conflict.cause, cause);
  assert.deepEqual(conflict.headers, { 'retry-after': '1' });
  assert.equal(conflict.message, 'eventId already used');
  assert.deepEqual(new AppError('not_found', 'x').headers, {});
  assert.equal('cause' in new AppError('not_found', 'x'), false, 'no cause unless one is given');
});

test(
  'a validation AppError keeps the field list as detail and names ' + 'the count and the first fields in its message',
  () => {
    const issues = [
      { loc: ['body', 'url'], msg: 'Invalid URL', type: 'value_error' },
      { loc: ['body', 'filterTypes', 0], msg: 'Too long', type: 'value_error' },
    ];
    const error = new AppError('validation', issues);
    assert.equal(error.status, 422);
    assert.deepEqual(error.detail, issues);
    assert.equal(error.message, 'validation: 2 failing fields: body.url: Invalid URL; body.filterTypes.0: Too long');
  },
);

test('notFound reveals only the kind of object', () => {
  const error = notFound('Endpoint');
  assert.equal(error.status, 404);
  assert.equal(error.code, 'not_found');
  assert.equal(error.detail, 'Endpoint not found');
  assert.equal(notFound().detail, 'Entity not found');
});
