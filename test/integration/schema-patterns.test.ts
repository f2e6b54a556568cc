/**
 * Event-type schemas cannot freeze the process (PostgreSQL server, through the official client): patterns
 * run on a linear-time engine, schemas are capped in size and in patterns when written, and the event loop's
 * longest stall while hostile payloads are checked stays bounded.
 */
import assert from 'node:assert/strict';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { after, before, describe, test } from 'node:test';
import { ApiException } from 'svix';
import { freshServerDatabase } from '../support/db.ts';
import { startApi, type ApiHarness } from './api-harness.ts';

/** Longest event-loop stall (ms) while `work` runs. */
async function longestStallMs(work: () => Promise<void>): Promise<number> {
  const histogram = monitorEventLoopDelay({ resolution: 5 });
  histogram.enable();
  try {
    await work();
  } finally {
    histogram.disable();
  }
  return histogram.max / 1e6;
}

async function refusal(
  call: Promise<unknown>,
): Promise<{ code: number; body: { code: string; detail: { loc: unknown[]; msg: string; type: string }[] } }> {
  const error = await call.then(
    () => assert.fail('expected a refusal'),
    (e: unknown) => e,
  );
  assert.ok(error instanceof ApiException, String(error));
  return { code: error.code, body: error.body as never };
}

describe('event-type schemas and the event loop', () => {
  let api: ApiHarness;
  before(async () => {
    api = await startApi(freshServerDatabase, { TIDINGS_MAX_BODY_BYTES: '1048576' });
  });
  after(async () => api?.close());

  test(
    'a catastrophic-backtracking pattern costs linear time: ^(a+)+$ on payloads up to 20,000 characters is ' +
      'answered in bounded time and never stalls the event loop',
    async () => {
      await api.svix.eventType.create({
        name: 'redos.probe',
        description: 'hostile',
        schemas: { 1: { type: 'object', properties: { s: { type: 'string', pattern: '^(a+)+$' } } } },
      });
      const app = await api.svix.application.create({ name: 'redos' });
      // One alone first: with JavaScript's RegExp 30 characters took 1.8 s, doubling per character (40: ~30 min).
      const one = performance.now();
      assert.equal(
        (
          await refusal(
            api.svix.message.create(app.id, { eventType: 'redos.probe', payload: { s: `${'a'.repeat(40)}!` } }),
          )
        ).code,
        422,
      );
      const oneMs = performance.now() - one;
      assert.ok(oneMs < 1500, `one hostile payload took ${oneMs.toFixed(0)} ms`);
      const started = performance.now();
      const stall = await longestStallMs(async () => {
        // 40 publishes at once; with JavaScript's RegExp the 30-character one alone stalled 1.8 s, doubling per
        // character.
        await Promise.all(
          Array.from({ length: 40 }, async (_, i) => {
            const s = `${'a'.repeat(i % 2 === 0 ? 40 : 20_000)}!`;
            const r = await refusal(api.svix.message.create(app.id, { eventType: 'redos.probe', payload: { s } }));
            assert.equal(r.code, 422);
            assert.deepEqual(r.body.detail[0]?.loc, ['body', 'payload', 's']);
          }),
        );
      });
      const elapsed = performance.now() - started;
      console.log(
        JSON.stringify({
          figure: 'redos',
          firstMs: Math.round(oneMs),
          publishes: 40,
          elapsedMs: Math.round(elapsed),
          longestStallMs: Math.round(stall),
        }),
      );
      // Backtracking would stall for minutes; linear matching leaves the shared machine's scheduling noise.
      assert.ok(stall < 750, `the event loop stalled ${stall.toFixed(0)} ms`);
      const ok = await api.svix.message.create(app.id, { eventType: 'redos.probe', payload: { s: 'a'.repeat(1000) } });
      assert.match(ok.id, /^msg_/, 'a matching payload is accepted');
    },
  );

  test(
    'a schema of 8,000 patterns is refused with 422 naming ' + 'TIDINGS_MAX_SCHEMA_PATTERNS, without compiling it',
    async () => {
      const properties = Object.fromEntries(
        Array.from({ length: 8000 }, (_, i) => [`p${i}`, { type: 'string', pattern: `^x${i}[a-z]+$` }]),
      );
      let r: Awaited<ReturnType<typeof refusal>> | undefined;
      const stall = await longestStallMs(async () => {
        r = await refusal(
          api.svix.eventType.create({
            name: 'many.patterns',
            description: 'big',
            schemas: { 1: { type: 'object', properties } },
          }),
        );
      });
      assert.equal(r!.code, 422);
      assert.deepEqual(r!.body.detail[0]?.loc, ['body', 'schemas', '1']);
      assert.match(r!.body.detail[0]!.msg, /TIDINGS_MAX_SCHEMA_BYTES|TIDINGS_MAX_SCHEMA_PATTERNS/);
      assert.ok(stall < 750, `the event loop stalled ${stall.toFixed(0)} ms (compiling it stalled 7.8 s)`);
    },
  );

  test(
    'a schema with more patterns than TIDINGS_MAX_SCHEMA_PATTERNS but under the size cap is refused naming the ' +
      'pattern cap',
    async () => {
      const properties = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`p${i}`, { pattern: `^${i}$` }]));
      const r = await refusal(
        api.svix.eventType.create({
          name: 'over.patterns',
          description: 'x',
          schemas: { 1: { type: 'object', properties } },
        }),
      );
      assert.equal(r.code, 422);
      assert.match(r.body.detail[0]!.msg, /100 patterns; at most 64 \(TIDINGS_MAX_SCHEMA_PATTERNS\)/);
      assert.equal(r.body.detail[0]!.type, 'value_error.jsonschema.too_many_patterns');
    },
  );

  test('a schema at the caps compiles once, when written, and checks a publish in bounded time', async () => {
    const properties = Object.fromEntries(
      Array.from({ length: 64 }, (_, i) => [`p${i}`, { type: 'string', pattern: `^(x${i}|y)+[a-z]*$` }]),
    );
    const stall = await longestStallMs(async () => {
      await api.svix.eventType.create({
        name: 'at.caps',
        description: 'x',
        schemas: { 1: { type: 'object', properties } },
      });
      const app = await api.svix.application.create({ name: 'caps' });
      await api.svix.message
        .create(app.id, { eventType: 'at.caps', payload: { p0: 'x0x0abc', p63: 'yyy' } })
        .catch((e: unknown) => assert.fail(JSON.stringify((e as ApiException<unknown>).body)));
    });
    console.log(JSON.stringify({ figure: 'schema-at-caps', patterns: 64, longestStallMs: Math.round(stall) }));
    // Compiling is ajv code generation on the event loop: the caps bound it (about 0.1 s for 64 patterns here).
    assert.ok(stall < 1000, `the event loop stalled ${stall.toFixed(0)} ms`);
  });

  test(
    'a pattern the linear-time engine cannot run (look-ahead, back-reference) is refused when the schema is ' +
      'written',
    async () => {
      for (const pattern of ['^(?=a)a$', '^(a)\\1$']) {
        const r = await refusal(
          api.svix.eventType.create({
            name: `lookaround.${pattern.length}`,
            description: 'x',
            schemas: { 1: { type: 'string', pattern } },
          }),
        );
        assert.equal(r.code, 422, pattern);
        assert.equal(r.body.detail[0]!.type, 'value_error.jsonschema.pattern', pattern);
        assert.match(r.body.detail[0]!.msg, /RE2/);
      }
    },
  );
});
