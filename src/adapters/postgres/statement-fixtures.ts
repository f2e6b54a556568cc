import { RECORD_ATTEMPTS } from './delivery/delivery-sql.ts';
import { PUBLISH, PUBLISH_HANDING, PUBLISH_KEYED, PUBLISH_KEYED_HANDING } from './message/publish-sql.ts';
import type { NamedStatement } from './named-sql.ts';

/**
 * The hot statements composed from named pieces (./named-sql.ts), rendered whole into test/fixtures/sql/ by
 * `npm run sql-fixtures` (bin/sql-fixtures.ts) so that review reads each variant as PostgreSQL runs it;
 * test/sql-fixtures.test.ts fails when a rendered text differs from its committed file.
 */
export const FIXTURE_STATEMENTS: readonly NamedStatement[] = Object.freeze([
  PUBLISH,
  PUBLISH_HANDING,
  PUBLISH_KEYED,
  PUBLISH_KEYED_HANDING,
  RECORD_ATTEMPTS,
]);

/** The file of `statement` in test/fixtures/sql/: its name without `tidings_`, kebab-case (`publish-keyed.sql`). */
export function fixtureFile(statement: NamedStatement): string {
  return `${statement.name.replace(/^tidings_/, '').replaceAll('_', '-')}.sql`;
}

/** The committed text of `statement`: its header comment, then the statement as it is sent. */
export function fixtureText(statement: NamedStatement): string {
  const note = '-- Rendered by `npm run sql-fixtures` from src/adapters/postgres/; do not edit.';
  return `${statement.header}\n--\n${note}\n\n${statement.text.trim()}\n`;
}
