import type { ValidationIssue } from './validation-issue.ts';

/**
 * Bounds of every error text Tidings writes (docs/reference/errors.md, "Bounded answers"): an error answer
 * lists at most `issuesMax` failing fields, each text (a message, a `loc` segment, a sentence) keeps at most
 * `textMaxChars` characters, and an error's message — what a log line's `err` and a trace span's status
 * carry — is one summary of at most `textMaxChars`. A refusal may quote the request (a key of the body, a
 * pattern), and a request may list thousands of failures: a 900 KB payload once gave a 45 MB answer.
 * Part of the wire contract, as the page size is, not a deployment setting.
 */
export const ERROR_BOUNDS = Object.freeze({ issuesMax: 20, textMaxChars: 512 } as const);

/**
 * `text` cut to `max` characters (never inside a surrogate pair), saying how much was left out; the text
 * itself when it fits.
 */
export function boundedText(text: string, max: number = ERROR_BOUNDS.textMaxChars): string {
  if (text.length <= max) return text;
  const end = text.charCodeAt(max - 1) >= 0xd800 && text.charCodeAt(max - 1) <= 0xdbff ? max - 1 : max;
  return `${text.slice(0, end)}… (${text.length - end} more characters)`;
}

/** One issue with each text bounded. */
function boundedIssue(issue: ValidationIssue): ValidationIssue {
  return {
    loc: issue.loc.map((segment) => (typeof segment === 'string' ? boundedText(segment) : segment)),
    msg: boundedText(issue.msg),
    type: boundedText(issue.type),
  };
}

/**
 * The issues an answer shows: the first {@link ERROR_BOUNDS}.issuesMax, each text bounded, then — when some
 * were left out — one more issue at loc `body` saying how many (`type` `value_error.more_issues`).
 */
export function boundedIssues(issues: readonly ValidationIssue[]): readonly ValidationIssue[] {
  const shown = issues.slice(0, ERROR_BOUNDS.issuesMax).map(boundedIssue);
  const left = issues.length - shown.length;
  if (left <= 0) return shown;
  const msg =
    `${left} more failing fields are not listed (an answer lists at most ${ERROR_BOUNDS.issuesMax}); fix these ` +
    'and send again';
  return [...shown, { loc: ['body'], msg, type: 'value_error.more_issues' }];
}

/**
 * The message of an error with this detail: a sentence bounded, or for a list of issues `code: N failing
 * field(s): loc: msg; …` bounded — never a text that grows with the request.
 */
export function errorSummary(code: string, detail: string | readonly ValidationIssue[]): string {
  if (typeof detail === 'string') return boundedText(detail);
  const first = detail
    .slice(0, 3)
    .map((d) => `${boundedText(d.loc.join('.'), 100)}: ${boundedText(d.msg, 100)}`)
    .join('; ');
  const fields = `${detail.length} failing field${detail.length === 1 ? '' : 's'}`;
  return boundedText(`${code}: ${fields}: ${first}${detail.length > 3 ? '; …' : ''}`);
}
