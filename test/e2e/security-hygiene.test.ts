/**
 * Hygiene and encryption at rest over a realistic flow (docs/guides/security.md), on the PostgreSQL server:
 * Tidings (API + dispatcher, in process) with every log line captured at debug level; endpoints with given,
 * generated and rotated secrets and a credential header; scoped and app-portal tokens; publishes by the
 * operator and by a scoped key; a receiver that fails then recovers, and one that answers 410; refused
 * requests (401, 404, 413, 422); a restart with a new key in front of the ring and `tidings keys rotate`
 * while Tidings runs. Then:
 * - the logs, `/metrics`, the error bodies and the timeline carry no `whsec_` value, no token or API key,
 *   no `v1,` signature, no key material, no credential header and no payload;
 * - no column of any table holds a secret, token, credential header or payload in plain text;
 * - no value is left under the old key.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { Svix } from 'svix';
import type { Db } from '../../src/adapters/postgres/db.ts';
import { loadConfig } from '../../src/config/config.ts';
import { encodeSecret } from '../../src/domain/signing.ts';
import { startTidings, type Running } from '../../src/main/compose.ts';
import { runKeysRotate } from '../../src/main/keys-rotate.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { freshServerDatabase, type TestDatabase } from '../support/db.ts';
import { LogTap } from '../support/log-tap.ts';
import { startTestReceiver, type TestReceiver } from '../support/test-receiver.ts';

const TOKEN = `tidings_hygiene_admin_${randomBytes(12).toString('hex')}`;
const K1 = randomBytes(32).toString('base64');
const K2 = randomBytes(32).toString('base64');
const mark = randomBytes(6).toString('hex');
const PAYLOAD_MARK = `PAYLOAD-MARKER-${mark}`;
const HEADER_MARK = `HDR-MARKER-${mark}`;

/** Every text column and every bytea column of every table holding `needle` in plain text. */
async function plaintextHits(db: Db, needle: string): Promise<string[]> {
  const columns = (
    await db.query<{ table_name: string; column_name: string; data_type: string }>(
      `SELECT c.table_name, c.column_name, c.data_type FROM information_schema.columns c
     JOIN information_schema.tables t ON t.table_name = c.table_name AND t.table_schema = c.table_schema
       AND t.table_type = 'BASE TABLE'
     WHERE c.table_schema = current_schema() AND c.table_name <> 'pgmigrations'`,
    )
  ).rows;
  const hits: string[] = [];
  for (const c of columns) {
    const expr =
      c.data_type === 'bytea'
        ? `position(convert_to($1, 'UTF8') in "${c.column_name}") > 0`
        : `position($1 in "${c.column_name}"::text) > 0`;
    const n = (
      await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM "${c.table_name}" WHERE ${expr}`, [needle])
    ).rows[0]!.n;
    if (n > 0) hits.push(`${c.table_name}.${c.column_name} (${n} rows)`);
  }
  return hits;
}

describe('secrets, tokens, signatures and payloads stay out of logs, answers and the database', () => {
  let database: TestDatabase;
  let receiver: TestReceiver;
  let tidings: Running | undefined;
  const logs = new LogTap();
  const secrets: string[] = [];
  const tokens: string[] = [TOKEN];
  const errorBodies: string[] = [];
  let metricsText = '';
  let timelineText = '';
  let rotateOutput: string[] = [];

  const env = (keys: string) => ({
    DATABASE_URL: database.url!,
    TIDINGS_ENCRYPTION_KEYS: keys,
    TIDINGS_API_TOKEN: TOKEN,
    HOST: '127.0.0.1',
    PORT: '0',
    TIDINGS_EGRESS_ALLOWLIST: '127.0.0.1/32',
    TIDINGS_RETRY_SCHEDULE: '30ms,30ms,30ms',
    TIDINGS_POLL_INTERVAL: '50ms',
    TIDINGS_LOG_LEVEL: 'debug',
    TIDINGS_MAX_BODY_BYTES: '65536',
  });
  const start = async (keys: string): Promise<{ svix: Svix; url: string }> => {
    tidings = await startTidings({ roles: { api: true, dispatcher: true }, logDestination: logs, env: env(keys) });
    return { svix: new Svix(TOKEN, { serverUrl: tidings.apiUrl! }), url: tidings.apiUrl! };
  };
  const raw = async (url: string, method: string, path: string, token: string, body?: string): Promise<Response> =>
    fetch(url + path, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body }),
    });
  const refused = async (res: Response, status: number): Promise<void> => {
    const text = await res.text();
    assert.equal(res.status, status, text);
    errorBodies.push(text);
  };
  const delivered = (messageId: string) =>
    logs.waitFor(
      (l) => l.event === 'delivery.attempted' && l.messageId === messageId && l.next === 'succeeded',
      30_000,
      `delivery of ${messageId}`,
    );

  before(async () => {
    database = await freshServerDatabase();
    receiver = await startTestReceiver();
    let { svix, url } = await start(`k1:${K1}`);

    const app = await svix.application.create({ name: 'hygiene', uid: `hygiene-${mark}` });
    const s1 = encodeSecret(randomBytes(32));
    secrets.push(s1);
    await receiver.setSecret('/h1', s1);
    await receiver.script('/h1', [{ status: 500, body: 'try again' }], { status: 200 });
    const e1 = await svix.endpoint.create(app.id, { url: receiver.url('/h1'), secret: s1, uid: 'h1' });
    await svix.endpoint.setHeaders(app.id, e1.id, {
      headers: { authorization: `Bearer ${HEADER_MARK}`, 'x-plain': 'visible' },
    });
    const e2 = await svix.endpoint.create(app.id, { url: receiver.url('/h2') });
    const s2 = (await svix.endpoint.getSecret(app.id, e2.id)).key;
    secrets.push(s2);
    await receiver.setSecret('/h2', s2);
    await receiver.script('/h2', [], { status: 410 });

    const scoped = (await (
      await raw(url, 'POST', '/api/v1/api-key', TOKEN, JSON.stringify({ name: 'scoped', appId: app.id }))
    ).json()) as { token: string };
    tokens.push(scoped.token);
    const portal = await svix.authentication.appPortalAccess(app.id, {});
    tokens.push(portal.token);
    const asScoped = new Svix(scoped.token, { serverUrl: url });

    const first = [];
    for (let n = 0; n < 3; n++)
      first.push(
        await (n % 2 === 0 ? svix : asScoped).message.create(app.id, {
          eventType: 'hygiene.test',
          payload: { n, note: PAYLOAD_MARK },
        }),
      );
    for (const m of first) await delivered(m.id);

    // Refused requests, each carrying something secret.
    const bogus = `tidings_${randomBytes(32).toString('base64url')}`;
    tokens.push(bogus);
    await refused(await raw(url, 'GET', '/api/v1/app', bogus), 401);
    await refused(await raw(url, 'GET', `/api/v1/app/${app.id}/endpoint/ep_01HZZZZZZZZZZZZZZZZZZZZZZZ`, TOKEN), 404);
    const s4 = encodeSecret(randomBytes(32));
    secrets.push(s4);
    await refused(
      await raw(url, 'POST', `/api/v1/app/${app.id}/endpoint`, TOKEN, JSON.stringify({ url: 'not a url', secret: s4 })),
      422,
    );
    await refused(
      await raw(
        url,
        'POST',
        `/api/v1/app/${app.id}/endpoint`,
        TOKEN,
        JSON.stringify({ url: receiver.url('/x'), secret: `${s4}!` }),
      ),
      422,
    );
    await refused(
      await raw(
        url,
        'POST',
        `/api/v1/app/${app.id}/msg`,
        TOKEN,
        JSON.stringify({ eventType: 'big', payload: { s4, pad: 'x'.repeat(70_000) } }),
      ),
      413,
    );
    await refused(await raw(url, 'POST', '/api/v1/app', scoped.token, JSON.stringify({ name: s4 })), 403);

    // Secret rotation: the previous secret keeps signing during the grace period.
    const s3 = encodeSecret(randomBytes(32));
    secrets.push(s3);
    await receiver.setSecret('/h1', [s1, s3]);
    await svix.endpoint.rotateSecret(app.id, e1.id, { key: s3 });
    await delivered(
      (await svix.message.create(app.id, { eventType: 'hygiene.test', payload: { rotated: true, note: PAYLOAD_MARK } }))
        .id,
    );

    // Restart with a new key in front of the ring; rotate while Tidings runs and delivers.
    await tidings!.stop();
    ({ svix, url } = await start(`k2:${K2},k1:${K1}`));
    const during = svix.message.create(app.id, {
      eventType: 'hygiene.test',
      payload: { during: true, note: PAYLOAD_MARK },
    });
    const lines: string[] = [];
    const result = await runKeysRotate({
      config: loadConfig(env(`k2:${K2},k1:${K1}`)),
      logger: createLogger({ level: 'debug', destination: logs }),
      out: (l) => lines.push(l),
    });
    assert.equal(result.exitCode, 0, lines.join('\n'));
    rotateOutput = lines;
    await delivered((await during).id);
    await delivered(
      (await svix.message.create(app.id, { eventType: 'hygiene.test', payload: { after: true, note: PAYLOAD_MARK } }))
        .id,
    );

    metricsText = await (await fetch(`${url}/metrics`)).text();
    timelineText = await (
      await raw(url, 'GET', `/api/v1/app/${app.id}/msg/${first[0]!.id}/endpoint/${e1.id}/timeline`, TOKEN)
    ).text();
    timelineText += await (
      await raw(url, 'GET', `/api/v1/app/${app.id}/msg/${first[0]!.id}/endpoint/${e2.id}/timeline`, TOKEN)
    ).text();
  });

  after(async () => {
    await tidings?.stop();
    await receiver?.stop();
    await database?.drop();
  });

  /**
   * What must appear nowhere: secrets (and their key part), tokens, key material, the credential header, the payload
   * marker.
   */
  const forbidden = (): string[] => [
    ...secrets,
    ...secrets.map((s) => s.slice('whsec_'.length)),
    ...tokens,
    K1,
    K2,
    HEADER_MARK,
    PAYLOAD_MARK,
  ];

  test(
    'the flow really happened: deliveries with signatures, a ' + 'dead letter, refused requests, a rotation',
    async () => {
      const requests = await receiver.requests();
      assert.ok(requests.filter((r) => r.path === '/h1').length >= 6);
      assert.ok(requests.filter((r) => r.path === '/h1').every((r) => r.signatureValid === true));
      assert.ok(
        requests.some((r) => r.path === '/h1' && r.headers.authorization === `Bearer ${HEADER_MARK}`),
        'the credential header reached the receiver',
      );
      assert.ok(requests.some((r) => r.path === '/h2' && r.answer.status === 410));
      assert.ok(
        requests.some((r) => r.body.includes(PAYLOAD_MARK)),
        'the payload marker is what receivers got (so the scans look for the right text)',
      );
      assert.equal(errorBodies.length, 6);
      assert.ok(
        rotateOutput.some((l) => l.startsWith('done')),
        rotateOutput.join('\n'),
      );
      // The scans read the lines that could leak: one per API request (the refused ones too) and one per attempt.
      const requestLines = logs.lines.filter((l) => l.msg === 'request completed' || l.msg === 'request errored');
      assert.ok(
        requestLines.filter(
          (l) =>
            (l.res as { statusCode?: number } | undefined)?.statusCode !== undefined &&
            (l.res as { statusCode: number }).statusCode >= 400,
        ).length >= 6,
        'a log line for each refused request',
      );
      assert.ok(logs.lines.filter((l) => l.event === 'delivery.attempted').length >= 6, 'a log line for each attempt');
    },
  );

  test('logs, metrics, error bodies and the timeline carry no secret, token, signature, key or payload', async () => {
    const signatures = (await receiver.requests())
      .flatMap((r) => (r.webhookSignature ?? '').split(' '))
      .filter((s) => s !== '');
    assert.ok(signatures.length > 0);
    const places: Record<string, string> = {
      logs: logs.text(),
      metrics: metricsText,
      'error bodies': errorBodies.join('\n'),
      timeline: timelineText,
    };
    for (const [where, text] of Object.entries(places)) {
      assert.doesNotMatch(text, /whsec_[A-Za-z0-9+/=]{8,}/, `a whsec_ value in the ${where}`);
      assert.doesNotMatch(text, /v1,[A-Za-z0-9+/]{20,}/, `a v1 signature in the ${where}`);
      for (const value of [...forbidden(), ...signatures])
        assert.ok(!text.includes(value), `${where} contain a secret value (${value.slice(0, 12)}…)`);
    }
  });

  test(
    'no column of any table holds a secret, token, credential header or payload in plain text, and nothing is ' +
      'left under the old key',
    async () => {
      const db = database.db;
      const problems: string[] = [];
      for (const value of forbidden()) {
        const hits = await plaintextHits(db, value);
        if (hits.length > 0) problems.push(`${value.slice(0, 14)}… in ${hits.join(', ')}`);
      }
      assert.deepEqual(problems, []);
      assert.deepEqual(await plaintextHits(db, 'whsec_'), [], 'no whsec_ text anywhere');
      const underK1 = await db.query<{ n: number }>(
        `SELECT (SELECT count(*) FROM endpoints WHERE secret_key_id = 'k1' OR previous_secret_key_id = 'k1'
          OR sensitive_headers_key = 'k1')
            + (SELECT count(*) FROM messages WHERE payload_key_id = 'k1') AS n`,
      );
      assert.equal(Number(underK1.rows[0]!.n), 0);
      const sensitive = (
        await db.query<{ n: number }>(
          'SELECT count(*)::int AS n FROM endpoints WHERE sensitive_headers IS NOT NULL AND previous_secret IS ' +
            'NOT NULL',
        )
      ).rows[0]!.n;
      assert.equal(sensitive, 1, 'the credential header and the previous secret are stored (encrypted)');
      assert.deepEqual(
        (
          await db.query<{ id: string; retired: boolean }>(
            'SELECT id, retired_at IS NOT NULL AS retired FROM encryption_keys ORDER BY id',
          )
        ).rows,
        [
          { id: 'k1', retired: true },
          { id: 'k2', retired: false },
        ],
      );
    },
  );
});
