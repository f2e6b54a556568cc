/** The generated documentation stays in step with the code (STYLE.md: one schema, one source of defaults). */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';
import { configurationMarkdown } from '../src/config/config.ts';

const root = new URL('../', import.meta.url);

test('README and docs/reference/configuration.md carry the configuration table generated from the schema (npm run docs)', async () => {
  const table = configurationMarkdown();
  const readme = await readFile(new URL('README.md', root), 'utf8');
  const reference = await readFile(new URL('docs/reference/configuration.md', root), 'utf8');
  assert.ok(readme.includes(`<!-- configuration:start -->\n${table}<!-- configuration:end -->`), 'README table is stale: run npm run docs');
  assert.ok(reference.endsWith(table), 'docs/reference/configuration.md is stale: run npm run docs');
});

test('README gives the two quick-start commands and CI runs the same test command', async () => {
  const readme = await readFile(new URL('README.md', root), 'utf8');
  const ci = await readFile(new URL('.ci/run', root), 'utf8');
  assert.match(readme, /npm ci && npm start/);
  assert.match(readme, /^npm test/m);
  assert.match(ci, /^npm test$/m);
});
