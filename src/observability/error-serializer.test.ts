import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { createLogger } from './logger.ts';
import { serializeError } from './error-serializer.ts';

/** A pg DatabaseError as the pool hands it to its 'error' listener: with the whole client attached. */
function poolError(): Error {
  const error = Object.assign(new Error('terminating connection due to administrator command'), {
    code: '57P01',
    severity: 'FATAL',
    routine: 'ProcessInterrupts',
    file: 'postgres.c',
    line: '3291',
    client: {
      processID: 4242,
      secretKey: 'cancel-key-1234567',
      connectionParameters: { password: 'pw' },
      parsedStatements: Object.fromEntries(
        Array.from({ length: 200 }, (_, i) => [`tidings_stmt_${i}`, `SELECT ${'x, '.repeat(30)} ${i}`]),
      ),
    },
  });
  return error;
}

test(
  'an error is logged by what went wrong, never by what it holds: the pg client of a pool error is left out ' +
    '(regression: 16 KB lines with the cancel key and every prepared statement)',
  () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _e, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    createLogger({ level: 'info', destination: sink }).warn({ err: poolError() }, 'idle database connection failed');
    assert.equal(lines.length, 1);
    const line = lines[0]!;
    assert.ok(line.length < 2048, `${line.length} characters`);
    for (const leak of ['cancel-key-1234567', 'secretKey', 'parsedStatements', 'tidings_stmt_', '"client"', '"pw"'])
      assert.ok(!line.includes(leak), `the line carries ${leak}`);
    const err = (JSON.parse(line) as { err: Record<string, unknown> }).err;
    assert.deepEqual(
      { type: err.type, code: err.code, severity: err.severity, routine: err.routine, message: err.message },
      {
        type: 'Error',
        code: '57P01',
        severity: 'FATAL',
        routine: 'ProcessInterrupts',
        message: 'terminating connection due to administrator command',
      },
    );
    assert.equal(typeof err.stack, 'string');
  },
);

test('cause chains and AggregateError members are followed a few levels down, each by the same fields', () => {
  const refused = (port: number) =>
    Object.assign(new Error(`connect ECONNREFUSED 127.0.0.1:${port}`), {
      code: 'ECONNREFUSED',
      errno: -111,
      syscall: 'connect',
      address: '127.0.0.1',
      port,
      socket: { huge: 'x'.repeat(10_000) },
    });
  const wrapped = new Error('claim failed', {
    cause: new AggregateError([refused(5432), refused(5433)], 'all failed'),
  });
  const out = serializeError(wrapped);
  const cause = out.cause as Record<string, unknown>;
  assert.equal(cause.type, 'AggregateError');
  assert.deepEqual(
    (cause.errors as Record<string, unknown>[]).map((e) => [e.code, e.port, e.syscall]),
    [
      ['ECONNREFUSED', 5432, 'connect'],
      ['ECONNREFUSED', 5433, 'connect'],
    ],
  );
  assert.ok(!JSON.stringify(out).includes('xxxx'), 'no other property of the member errors');
  assert.deepEqual(serializeError('plain text'), { message: 'plain text' });
});
