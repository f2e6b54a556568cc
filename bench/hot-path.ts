/**
 * `node bench/hot-path.ts [--iterations N]`: per-call CPU of pieces of the per-message hot path, each
 * beside the form it replaced, in one process (one invocation: the same machine load for both forms).
 * Prints µs per call (median of 5 rounds). See docs/adr/0016-hot-path-cost.md.
 */
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { REDACT_PATHS } from '../src/observability/logger.ts';
import { requestLine } from '../src/http/plugins/request-line.ts';
import { createRandomPool } from '../src/adapters/crypto/random-pool.ts';
import { parseTree } from 'jsonc-parser';
import { payloadBytes } from '../src/http/payload-span.ts';

const { values } = parseArgs({ options: { iterations: { type: 'string' } } });
const iterations = Math.max(1_000, Number(values.iterations ?? 50_000));

/** Median over 5 rounds of µs per call of `fn` (after one warm-up round). */
function measure(fn: (i: number) => void): number {
  const rounds: number[] = [];
  for (let r = 0; r < 6; r += 1) {
    const t0 = process.cpuUsage();
    for (let i = 0; i < iterations; i += 1) fn(i);
    const t = process.cpuUsage(t0);
    if (r > 0) rounds.push((t.user + t.system) / iterations);
  }
  rounds.sort((a, b) => a - b);
  return rounds[2]!;
}

const sink = new Writable({ write: (_chunk, _enc, cb) => cb() });
const logger = pino(
  { level: 'info', redact: { paths: [...REDACT_PATHS], censor: '[redacted]' }, base: { pid: process.pid } },
  sink,
);
const redactedChild = logger.child({ reqId: 'req_0123456789abcdef' });
const plain = logger.child({}, { redact: [] });
const fakeRequest = {
  id: 'req_0123456789abcdef',
  method: 'POST',
  url: '/api/v1/app/app_01JBENCH/msg?with_content=false',
};
const fakeReply = { statusCode: 202, elapsedTime: 1.234 };

const rows: [string, number, number][] = [];
rows.push([
  'request line (info, 1 per API call): redacted child → plain logger',
  measure(() =>
    redactedChild.info(
      {
        req: { method: fakeRequest.method, url: fakeRequest.url },
        res: { statusCode: fakeReply.statusCode },
        responseTime: fakeReply.elapsedTime,
      },
      'request completed',
    ),
  ),
  measure(() => plain.info(requestLine(fakeRequest, fakeReply), 'request completed')),
]);
const pool = createRandomPool(4096);
rows.push([
  'AES-GCM IV (12 random bytes, 1 per encrypt): randomBytes → pooled',
  measure(() => randomBytes(12)),
  measure(() => pool.take(12)),
]);
// The form it replaced: the whole body as a tree (jsonc-parser), then the `payload` member's span.
const body = `{"eventType":"bench.event","payload":{"seq":123,"kind":"bench","pad":"${'x'.repeat(960)}"}}`;
const treeSpan = (text: string): Buffer => {
  const value = parseTree(text)?.children?.find((m) => m.children?.[0]?.value === 'payload')?.children?.[1];
  return Buffer.from(value === undefined ? '' : text.slice(value.offset, value.offset + value.length), 'utf8');
};
rows.push([
  'exact payload span (1 per publish, 1 KiB body): jsonc-parser tree → member scan',
  measure(() => treeSpan(body)),
  measure(() => payloadBytes(body)),
]);

console.log(
  `iterations per round: ${iterations}; µs of CPU per call, median of 5 rounds; load average ${(await import('node:os'))
    .loadavg()
    .map((v) => v.toFixed(2))
    .join(' ')}`,
);
for (const [name, before, after] of rows)
  console.log(
    `${name}: ${before.toFixed(2)} → ${after.toFixed(2)} µs (${((1 - after / before) * 100).toFixed(0)} % less)`,
  );
