/**
 * The console's and portal's API types stay those of the API: web/src/shared/api-types.ts, generated from the
 * OpenAPI document the server builds from its route schemas, equals what `npm run api-types` writes now. A route
 * schema changed without running it fails here (and the pages type-check against the old shapes until it runs).
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';
import { API_TYPES_FILE, apiTypesText } from '../bin/api-types.ts';

test(
  'web/src/shared/api-types.ts equals the types generated from the ' + 'served OpenAPI document (npm run api-types)',
  async () => {
    const committed = await readFile(API_TYPES_FILE, 'utf8');
    const generated = await apiTypesText();
    if (committed === generated) return;
    const a = committed.split('\n');
    const b = generated.split('\n');
    const at = a.findIndex((line, i) => line !== b[i]);
    assert.fail(
      `web/src/shared/api-types.ts differs from the API's OpenAPI document at line ${at + 1}: run npm run api-types\n` +
        `committed: ${a[at] ?? '(end of file)'}\ngenerated: ${b[at] ?? '(end of file)'}`,
    );
  },
);
