import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AppError } from './errors.ts';
import { boundedIssues, boundedText, ERROR_BOUNDS, errorSummary } from './error-bounds.ts';

test(
  'a text over the bound keeps its first characters and says how many were left out, never splitting a surrogate ' +
    'pair',
  () => {
    assert.equal(boundedText('short'), 'short');
    assert.equal(boundedText('abcdef', 4), 'abcd… (2 more characters)');
    assert.equal(boundedText('abc\u{1F600}d', 4), 'abc… (3 more characters)');
  },
);

test('an answer lists the first issues, each text bounded, then one issue saying how many more there are', () => {
  const many = Array.from({ length: 1000 }, (_, i) => ({
    loc: ['body', `k${'x'.repeat(2000)}${i}`],
    msg: 'm'.repeat(2000),
    type: 'value_error',
  }));
  const shown = boundedIssues(many);
  assert.equal(shown.length, ERROR_BOUNDS.issuesMax + 1);
  assert.ok(
    shown.every(
      (i) =>
        i.msg.length <= ERROR_BOUNDS.textMaxChars + 40 &&
        String(i.loc[1] ?? '').length <= ERROR_BOUNDS.textMaxChars + 40,
    ),
  );
  assert.deepEqual(shown.at(-1)?.loc, ['body']);
  assert.match(shown.at(-1)?.msg ?? '', /^980 more failing fields/);
  assert.deepEqual(boundedIssues(many.slice(0, 2)).length, 2, 'nothing is added when all fit');
});

test("an error's message (what logs and trace spans carry) is one bounded summary, however many issues it has", () => {
  const issues = Array.from({ length: 60_000 }, (_, i) => ({
    loc: ['body', 'payload', `k${i}`],
    msg: 'must be string',
    type: 'value_error.jsonschema.type',
  }));
  const error = new AppError('validation', issues);
  assert.ok(error.message.length <= ERROR_BOUNDS.textMaxChars + 40, `${error.message.length} characters`);
  assert.match(error.message, /^validation: 60000 failing fields: body\.payload\.k0: must be string/);
  assert.equal(errorSummary('not_found', 'x'.repeat(10_000)).length < 600, true);
});
