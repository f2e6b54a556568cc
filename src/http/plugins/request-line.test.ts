import assert from 'node:assert/strict';
import { test } from 'node:test';
import { REDACT_PATHS } from '../../observability/logger.ts';
import { requestLine } from './request-line.ts';

test('the completed-request line holds only ids, method, the redacted url, status and duration', () => {
  const line = requestLine(
    { id: 'req_1', method: 'POST', url: '/api/v1/app/a/msg?token=tid_secret123456' },
    { statusCode: 202, elapsedTime: 1.5 },
  );
  assert.deepEqual(Object.keys(line).sort(), ['req', 'reqId', 'res', 'responseTime']);
  assert.deepEqual(Object.keys(line.req).sort(), ['method', 'url']);
  assert.ok(!line.req.url.includes('tid_secret123456'), line.req.url);
  assert.equal(line.res.statusCode, 202);
});

test('no field of the completed-request line is a path the redacting logger would censor', () => {
  const line = requestLine({ id: 'req_1', method: 'GET', url: '/x' }, { statusCode: 200, elapsedTime: 1 });
  const paths: string[] = [];
  const walk = (v: unknown, at: string[]): void => {
    if (v !== null && typeof v === 'object') for (const [k, c] of Object.entries(v)) walk(c, [...at, k]);
    else paths.push(at.join('.'));
  };
  walk(line, []);
  const leaves = new Set(
    REDACT_PATHS.map((p) =>
      p
        .split('.')
        .pop()!
        .replace(/^.*\["(.*)"\]$/, '$1'),
    ),
  );
  for (const p of paths) assert.ok(!leaves.has(p.split('.').pop()!), `${p} is a redacted name`);
});
