import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { createLogger } from './logger.ts';
import { createTransientFaults, REPEAT_MS } from './transient-faults.ts';

/** A database restart as the pg driver reports it (SQLSTATE 57P01) and a refused connection. */
const restart = () =>
  Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' });
const refused = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
const isTransient = (e: unknown): boolean => ['57P01', 'ECONNREFUSED'].includes(String((e as { code?: unknown }).code));

function harness() {
  let now = 1_000_000;
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _e, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  const transient = createTransientFaults({ isTransient, nowMs: () => now });
  const logger = createLogger({ level: 'info', destination: sink, transient });
  return {
    logger,
    transient,
    lines,
    advance: (ms: number) => {
      now += ms;
    },
  };
}

test(
  'a database restart is logged at warn once per change of state with a count, not at error once a second per ' +
    'caller (regression)',
  () => {
    const h = harness();
    const rollup = h.logger.child({ job: 'stats' });
    // 30 s of a restart: the roll-up job's error each second, the dispatcher's and a request's warnings.
    for (let s = 0; s < 30; s += 1) {
      rollup.error({ err: s < 10 ? restart() : refused() }, 'stats roll-up failed');
      h.logger.warn({ err: refused(), retryInMs: 1000 }, 'claim failed; backing off');
      h.advance(1000);
    }
    h.logger.child({ reqId: 'r1' }).warn({ err: refused() }, 'database unavailable');
    assert.deepEqual(
      h.lines.map((l) => [l.level, l.event, l.failures, l.during]),
      [[40, 'database.unavailable', 1, 'stats roll-up failed']],
    );
    assert.equal(h.lines[0]!.job, 'stats', 'the first fault keeps its bindings');
    assert.equal((h.lines[0]!.err as { code?: string }).code, '57P01');
    assert.equal(h.transient.failures(), 61);

    h.transient.recovered();
    assert.deepEqual(
      h.lines.slice(1).map((l) => [l.level, l.event, l.failures, l.unavailableMs]),
      [[40, 'database.available', 61, 30_000]],
    );
    h.transient.recovered();
    assert.equal(h.lines.length, 2, 'a connection without a spell writes nothing');
  },
);

test(
  'a spell that lasts writes one line per REPEAT_MS with the ' + 'count; other warn and error lines pass unchanged',
  () => {
    const h = harness();
    h.logger.error({ err: new Error('syntax error at or near "SELEC"') }, 'unexpected fault');
    h.logger.warn({ err: refused() }, 'claim failed; backing off');
    h.advance(REPEAT_MS - 1);
    h.logger.warn({ err: refused() }, 'claim failed; backing off');
    h.advance(1);
    h.logger.warn({ err: refused() }, 'claim failed; backing off');
    h.logger.info({ err: refused() }, 'an info line is not a fault report');
    assert.deepEqual(
      h.lines.map((l) => [l.level, l.event ?? l.msg, l.failures]),
      [
        [50, 'unexpected fault', undefined],
        [40, 'database.unavailable', 1],
        [40, 'database.unavailable', 3],
        [30, 'an info line is not a fault report', undefined],
      ],
    );
    assert.equal(h.lines[2]!.unavailableMs, REPEAT_MS);
  },
);
