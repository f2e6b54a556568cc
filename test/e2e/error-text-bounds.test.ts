/**
 * An error's text reaches traces and logs bounded (domain/error-bounds.ts): an API process on the PostgreSQL
 * server exports its request spans over OTLP/HTTP (JSON) to a receiver on 127.0.0.1 that this test starts;
 * requests that fail with thousands of violations, or that quote a huge key, give spans whose status message
 * and attributes stay within ERROR_BOUNDS.textMaxChars, and log lines of bounded size.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ERROR_BOUNDS } from '../../src/domain/error-bounds.ts';
import { TEST_ENCRYPTION_KEYS } from '../support/cipher.ts';
import { freshServerDatabase, type TestDatabase } from '../support/db.ts';
import { startOtlpReceiver, type OtlpReceiver } from '../support/otlp-receiver.ts';
import { startTidingsProcess, tidingsEnv, type TidingsProcess } from '../support/tidings-process.ts';

const API_TOKEN = 'tidings_bounds_test_admin_token_0123456789';
const WAIT_MS = 60_000;
/** Longest text a bounded one may be: the kept characters and the note of how many were left out. */
const TEXT_BOUND = ERROR_BOUNDS.textMaxChars + 64;

/** Every span status message in the raw OTLP/JSON export bodies. */
function statusMessages(bodies: readonly string[]): string[] {
  const out: string[] = [];
  for (const text of bodies) {
    const body = JSON.parse(text) as {
      resourceSpans?: { scopeSpans?: { spans?: { status?: { message?: string } }[] }[] }[];
    };
    for (const rs of body.resourceSpans ?? [])
      for (const ss of rs.scopeSpans ?? [])
        for (const s of ss.spans ?? []) if (s.status?.message !== undefined) out.push(s.status.message);
  }
  return out;
}

describe('error texts in traces and logs', () => {
  let database: TestDatabase;
  let otlp: OtlpReceiver;
  let apiProcess: TidingsProcess;
  let apiUrl: string;

  before(async () => {
    database = await freshServerDatabase();
    otlp = await startOtlpReceiver();
    apiProcess = await startTidingsProcess({
      role: 'api',
      name: 'api',
      env: tidingsEnv({
        DATABASE_URL: database.url ?? '',
        TIDINGS_ENCRYPTION_KEYS: TEST_ENCRYPTION_KEYS,
        TIDINGS_API_TOKEN: API_TOKEN,
        HOST: '127.0.0.1',
        PORT: '0',
        TIDINGS_DB_POOL_SIZE: '4',
        OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_BSP_SCHEDULE_DELAY: '100',
        OTEL_SERVICE_NAME: 'tidings-api',
      }),
    });
    apiUrl = apiProcess.apiUrl ?? '';
  });
  after(async () => {
    await apiProcess?.stop().catch(() => undefined);
    await otlp?.close();
    await database?.drop();
  });

  const call = (method: string, path: string, body: unknown): Promise<Response> =>
    fetch(apiUrl + path, {
      method,
      headers: { authorization: `Bearer ${API_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  test(
    'a 422 for 20,000 schema violations, 5,000 unknown fields or a 100,000-character key (in the body or the ' +
      'payload) gives spans whose status message stays within ERROR_BOUNDS.textMaxChars, and bounded log lines',
    async () => {
      const app = (await (await call('POST', '/api/v1/app', { name: 'bounds' })).json()) as { id: string };
      assert.equal(
        (
          await call('POST', '/api/v1/event-type', {
            name: 'all.strings',
            description: 'd',
            schemas: { 1: { type: 'object', additionalProperties: { type: 'string' } } },
          })
        ).status,
        201,
      );
      const from = apiProcess.lines.length;
      const refusals = [
        await call('POST', `/api/v1/app/${app.id}/msg`, {
          eventType: 'all.strings',
          payload: Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`k${i}`, i])),
        }),
        await call(
          'POST',
          '/api/v1/app',
          Object.fromEntries([['name', 'x'], ...Array.from({ length: 5_000 }, (_, i) => [`unknown${i}`, i])]),
        ),
        await call('POST', '/api/v1/app', { name: 'x', [`k${'x'.repeat(100_000)}`]: 1 }),
        await call('POST', `/api/v1/app/${app.id}/msg`, {
          eventType: 'all.strings',
          payload: { [`k${'y'.repeat(100_000)}`]: 1 },
        }),
      ];
      for (const res of refusals) {
        assert.equal(res.status, 422);
        assert.ok(Buffer.byteLength(await res.text()) < (ERROR_BOUNDS.issuesMax + 1) * (TEXT_BOUND * 3 + 200));
      }
      const spans = await otlp.waitFor(
        (all) => all.filter((s) => s.attributes['http.response.status_code'] === 422).length >= 4,
        WAIT_MS,
        'four refused request spans',
      );
      assert.ok(spans.filter((s) => s.status === 2).length >= 4, 'the refusals are error spans');
      const messages = statusMessages(otlp.bodies());
      assert.ok(messages.length >= 4, `status messages: ${messages.length}`);
      for (const message of messages)
        assert.ok(
          message.length <= TEXT_BOUND,
          `a status message of ${message.length} characters: ${message.slice(0, 200)}`,
        );
      for (const span of spans)
        for (const value of Object.values(span.attributes))
          assert.ok(
            JSON.stringify(value).length <= 2 * TEXT_BOUND,
            `attribute of ${JSON.stringify(value).length} characters`,
          );
      for (const line of apiProcess.lines.slice(from))
        assert.ok(JSON.stringify(line).length < 16 * 1024, `a log line of ${JSON.stringify(line).length} characters`);
    },
  );
});
