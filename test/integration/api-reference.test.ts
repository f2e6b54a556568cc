/**
 * docs/reference/api.md stays in step with the routes (docs/design.md#the-http-api: every route is described by a
 * schema that also produces the OpenAPI document): each operation of the served OpenAPI document is listed in the
 * reference, and the reference lists no route the API does not have. The route set does not depend on
 * the engine, so this runs on the PostgreSQL server only.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, test } from 'node:test';
import { freshServerDatabase } from '../support/db.ts';
import { startApi, type ApiHarness } from './api-harness.ts';

let api: ApiHarness;
before(async () => {
  api = await startApi(freshServerDatabase);
});
after(async () => api?.close());

test(
  'the OpenAPI document is served without authentication and every operation in it is in docs/reference/api.md, ' +
    'and only those',
  async () => {
    const res = await api.request('GET', '/api/v1/openapi.json', { token: null });
    assert.equal(res.status, 200);
    const doc = (await res.json()) as { openapi: string; paths: Record<string, Record<string, unknown>> };
    assert.match(doc.openapi, /^3\.1/);
    const served = Object.entries(doc.paths)
      .flatMap(([path, ops]) => Object.keys(ops).map((method) => `${method.toUpperCase()} ${path}`))
      .sort();
    assert.ok(served.length >= 50, `${served.length} operations`);

    const reference = await readFile(new URL('../../docs/reference/api.md', import.meta.url), 'utf8');
    const documented = [...reference.matchAll(/^\| (GET|POST|PUT|PATCH|DELETE) \| `([^`]+)` \|/gm)]
      .map((m) => `${m[1]} ${m[2]}`)
      .sort();
    const missing = served.filter((op) => !documented.includes(op));
    const phantom = documented.filter((op) => !served.includes(op));
    assert.deepEqual(missing, [], `routes missing from docs/reference/api.md:\n${missing.join('\n')}`);
    assert.deepEqual(phantom, [], `docs/reference/api.md lists routes the API does not have:\n${phantom.join('\n')}`);
    assert.equal(new Set(documented).size, documented.length, 'each route once');
  },
);
