/**
 * Failure table (docs/guides/failure-table.md), scenario 9: a configuration that cannot keep the promise is refused at
 * start-up, before any database is touched, with a non-zero exit and a message naming every problem. The `tidings`
 * command runs as a real process; its database address points at a closed port, so a start-up that went past the
 * configuration check would fail differently (and later).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { TEST_ENCRYPTION_KEYS } from '../support/cipher.ts';
import { FAULT_ADMIN_TOKEN } from '../support/fault-world.ts';
import { runTidingsCommand, tidingsEnv } from '../support/tidings-process.ts';

const TIMEOUT_MS = 60_000;

const base = tidingsEnv({
  DATABASE_URL: 'postgresql://postgres@127.0.0.1:1/unreachable',
  TIDINGS_ENCRYPTION_KEYS: TEST_ENCRYPTION_KEYS,
  TIDINGS_API_TOKEN: FAULT_ADMIN_TOKEN,
  PORT: '0',
  TIDINGS_ADMIN_PORT: '0',
});

describe('configuration that cannot keep the promise', () => {
  for (const role of ['dispatcher', 'serve']) {
    test(
      `scenario 9: \`tidings ${role}\` with a lease shorter than the attempt deadline plus margin is refused at ` +
        'start-up, naming the problem',
      async () => {
        const started = Date.now();
        const res = await runTidingsCommand(
          [role],
          { ...base, TIDINGS_LEASE: '10s', TIDINGS_ATTEMPT_DEADLINE: '15s' },
          TIMEOUT_MS,
        );
        assert.equal(res.timedOut, false);
        assert.equal(res.code, 2, `exit code 2 (configuration); stderr: ${res.stderr}`);
        assert.match(res.stderr, /invalid configuration/);
        assert.match(
          res.stderr,
          /TIDINGS_LEASE \(10000 ms\) must exceed TIDINGS_ATTEMPT_DEADLINE \(15000 ms\) plus 1000 ms/,
        );
        assert.doesNotMatch(res.stdout, /starting Tidings/, 'refused before opening the database');
        console.log(
          `fault-summary scenario="9 unsafe configuration refused (${role})" exit_code=${res.code} ` +
            `time_s=${((Date.now() - started) / 1000).toFixed(1)}`,
        );
      },
    );
  }

  test(
    'scenario 9: every problem is listed at once — a lease at the deadline, an unreadable retry schedule, a ' +
      'misspelt fault point',
    async () => {
      const res = await runTidingsCommand(
        ['dispatcher'],
        {
          ...base,
          TIDINGS_LEASE: '15s',
          TIDINGS_ATTEMPT_DEADLINE: '15s',
          TIDINGS_RETRY_SCHEDULE: '5s,soon,1h',
          TIDINGS_TEST_FAULT_POINTS: 'after_sent:exit',
          TIDINGS_MAX_RECLAIMS: '0',
        },
        TIMEOUT_MS,
      );
      assert.equal(res.code, 2, res.stderr);
      const problems = res.stderr.split('\n').filter((line) => line.trimStart().startsWith('- '));
      assert.equal(problems.length, 4, res.stderr);
      assert.match(
        res.stderr,
        /TIDINGS_LEASE \(15000 ms\) must exceed TIDINGS_ATTEMPT_DEADLINE \(15000 ms\) plus 1000 ms/,
      );
      assert.match(res.stderr, /TIDINGS_RETRY_SCHEDULE="5s,soon,1h": "soon" is not a duration/);
      assert.match(res.stderr, /TIDINGS_TEST_FAULT_POINTS="after_sent:exit": "after_sent:exit" is not a fault point/);
      assert.match(res.stderr, /TIDINGS_MAX_RECLAIMS="0"/);
      assert.doesNotMatch(res.stdout, /starting Tidings/);
    },
  );

  test(
    'scenario 9: the smallest safe lease (deadline plus 1 s) passes the check and start-up goes on to the ' +
      'database',
    async () => {
      const res = await runTidingsCommand(
        ['dispatcher'],
        { ...base, TIDINGS_LEASE: '16s', TIDINGS_ATTEMPT_DEADLINE: '15s' },
        TIMEOUT_MS,
      );
      assert.equal(res.code, 1, 'fails later, on the unreachable database');
      assert.doesNotMatch(res.stderr, /invalid configuration/);
      assert.match(res.stderr, /ECONNREFUSED|connect/i);
    },
  );
});
