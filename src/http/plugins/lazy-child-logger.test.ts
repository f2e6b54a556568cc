import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import type { FastifyBaseLogger } from 'fastify';
import { pino } from 'pino';
import { REDACT_PATHS } from '../../observability/logger.ts';
import { lazyChildLogger } from './lazy-child-logger.ts';

/** A logger like the process logger (its redaction) writing into `lines`, and a count of the children made of it. */
function counted(level = 'info'): {
  logger: FastifyBaseLogger;
  lines: Record<string, unknown>[];
  children: () => number;
} {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write: (chunk: Buffer, _enc, done) => {
      lines.push(JSON.parse(chunk.toString('utf8')) as Record<string, unknown>);
      done();
    },
  });
  let made = 0;
  const logger = pino(
    {
      level,
      redact: { paths: [...REDACT_PATHS], censor: '[redacted]' },
      onChild: () => {
        made += 1;
      },
    },
    sink,
  );
  return { logger, lines, children: () => made };
}

const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

test('no child logger is made for a request that writes no line through it', () => {
  const { logger, children } = counted();
  const log = lazyChildLogger(logger, { reqId: 'req_1' }, {});
  assert.equal(log.level, 'info');
  assert.equal(children(), 0);
});

test("a line written through it is the default child's line: the request id bound, secrets redacted", async () => {
  const { logger, lines, children } = counted();
  const log = lazyChildLogger(logger, { reqId: 'req_2' }, {});
  log.warn({ token: 'tidings_secret', n: 1 }, 'first');
  log.error('second');
  await flush();
  assert.equal(children(), 1, 'the child is made once, at the first line');
  assert.equal(lines.length, 2);
  assert.deepEqual([lines[0]!.reqId, lines[0]!.token, lines[0]!.n, lines[0]!.msg], ['req_2', '[redacted]', 1, 'first']);
  assert.deepEqual([lines[1]!.reqId, lines[1]!.msg], ['req_2', 'second']);
});

test("levels below the logger's stay off, and a child of it carries both bindings", async () => {
  const { logger, lines } = counted('warn');
  const log = lazyChildLogger(logger, { reqId: 'req_3' }, {});
  log.info('not written');
  log.child({ part: 'x' }).warn('written');
  await flush();
  assert.equal(lines.length, 1);
  assert.deepEqual([lines[0]!.reqId, lines[0]!.part, lines[0]!.msg], ['req_3', 'x', 'written']);
});

test('a route with its own log level gets its child at once, with that level', () => {
  const { logger, children } = counted('info');
  const log = lazyChildLogger(logger, { reqId: 'req_4' }, { level: 'error' });
  assert.equal(children(), 1);
  assert.equal(log.level, 'error');
});
