/**
 * Every user-given value that becomes a header of the outbound request (a raw message's content type, an
 * endpoint's custom headers) is accepted only when the sender can send it unchanged: what the API accepts,
 * the real HTTP sender delivers byte for byte to a receiver on 127.0.0.1; what it refuses (422 naming the
 * field) the sender would refuse at every attempt or the receiver would read differently. Runs on the
 * PostgreSQL server (validation only).
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { messageInRaw } from 'svix';
import { createHttpSender } from '../../src/adapters/http-sender/http-sender.ts';
import type { Sender } from '../../src/ports/sender.ts';
import { freshServerDatabase } from '../support/db.ts';
import { startApi, type ApiHarness } from './api-harness.ts';

const refused = (loc: readonly (string | number)[]) => (e: unknown) => {
  const error = e as { code?: number; body?: { code?: string; detail?: { loc: unknown[] }[] } };
  return (
    error.code === 422 &&
    error.body?.code === 'validation' &&
    JSON.stringify(error.body.detail?.[0]?.loc) === JSON.stringify(loc)
  );
};

/** Content types a client may send; the first group is sendable unchanged, the second is not. */
const SENDABLE = [
  'text/plain',
  'text/csv; charset=utf-8',
  'application/xml;charset="utf-8"',
  'text/plain;\ta=b',
  'text/plain; a="x \\" y"',
  'a/b ; c=d',
];
const UNSENDABLE = [
  'text/plain\n; a=b',
  'text/plain\r\n; a=b',
  'text/plain;\u00a0a=b',
  'text/plain\u2003; a=b',
  'text/plain;\u2028a=b',
  'text/plain; a="\u0001"',
  'text/plain; a="caf\u00e9"',
  'text/plain; a=\u00e9',
  ' text/plain',
  'text/plain ',
  'text/plain\t',
  'text/plain; a="x\ny"',
  'text/plain\u0000',
];

describe('header values a user gives', () => {
  let api: ApiHarness;
  let appId: string;
  let receiver: Server;
  let seen: Record<string, string>[] = [];
  let pools = 0;
  let sender: Sender;
  let url: string;
  before(async () => {
    api = await startApi(freshServerDatabase);
    appId = (await api.svix.application.create({ name: 'headers' })).id;
    receiver = createServer((req, res) => {
      // Header values as the wire carried them: Node decodes each byte as one Latin-1 character.
      const raw: Record<string, string> = {};
      for (let i = 0; i < req.rawHeaders.length; i += 2) raw[req.rawHeaders[i]!.toLowerCase()] = req.rawHeaders[i + 1]!;
      seen.push(raw);
      req.resume();
      req.on('end', () => res.end('ok'));
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    sender = createHttpSender({
      connectTimeoutMs: 2000,
      headersTimeoutMs: 2000,
      bodyTimeoutMs: 2000,
      deadlineMs: 5000,
      maxResponseBytes: 1024,
      responsePrefixBytes: 64,
      maxSocketsPerOrigin: 2,
      egressAllowlist: ['127.0.0.1/32'],
      userAgent: 'Tidings/test',
    });
  });
  after(async () => {
    await sender?.close();
    receiver?.close();
    await api?.close();
  });

  /**
   * Sends one request with header `name: value` through the real sender: whether the receiver got the value's
   * UTF-8 bytes unchanged on the wire (false when the sender refused it, or it arrived as other bytes).
   */
  const arrivesUnchanged = async (name: string, value: string): Promise<boolean> => {
    seen = [];
    // A pool of its own per request: a refused request must not change how the next one is sent.
    const result = await sender.send(
      { url, headers: { [name]: value }, body: Buffer.from('x'), poolKey: `p${(pools += 1)}` },
      AbortSignal.timeout(5000),
    );
    if (result.type !== 'response' || result.statusCode !== 200) return false;
    const raw = seen[0]?.[name];
    return raw !== undefined && Buffer.from(raw, 'latin1').equals(Buffer.from(value, 'utf8'));
  };

  test(
    'a raw message whose content type undici would refuse (a line break, a Unicode space, a control character, ' +
      'non-ASCII, outer whitespace) is refused with 422 at publish, not accepted with 202 and then failed at every ' +
      'attempt',
    async () => {
      const loc = ['body', 'transformationsParams', 'headers', 'content-type'];
      for (const contentType of UNSENDABLE) {
        await assert.rejects(
          api.svix.message.create(appId, messageInRaw('raw.one', 'body', contentType)),
          refused(loc),
          JSON.stringify(contentType),
        );
        assert.equal(
          await arrivesUnchanged('content-type', contentType),
          false,
          `${JSON.stringify(contentType)}: the sender cannot send it unchanged either`,
        );
      }
      for (const contentType of SENDABLE) {
        await api.svix.message.create(appId, messageInRaw('raw.one', 'body', contentType));
        assert.equal(await arrivesUnchanged('content-type', contentType), true, JSON.stringify(contentType));
      }
      const stored = await api.database.db.query<{ content_type: string }>(
        'SELECT content_type FROM messages WHERE app_id = $1 ORDER BY id',
        [appId],
      );
      assert.deepEqual(
        stored.rows.map((r) => r.content_type),
        SENDABLE,
        'only the sendable ones were stored',
      );
    },
  );

  test(
    'an endpoint header value or name that cannot be sent unchanged is refused with 422 naming it, on create, ' +
      'set, patch and deleteHeaders',
    async () => {
      const ep = await api.svix.endpoint.create(appId, { url: 'http://127.0.0.1:9/h' });
      for (const value of UNSENDABLE) {
        const headers = { 'x-custom': value };
        await assert.rejects(
          api.svix.endpoint.create(appId, { url: 'http://127.0.0.1:9/h', headers }),
          refused(['body', 'headers', 'x-custom']),
          JSON.stringify(value),
        );
        await assert.rejects(
          api.svix.endpoint.setHeaders(appId, ep.id, { headers }),
          refused(['body', 'headers', 'x-custom']),
          JSON.stringify(value),
        );
        await assert.rejects(
          api.svix.endpoint.patchHeaders(appId, ep.id, { headers }),
          refused(['body', 'headers', 'x-custom']),
          JSON.stringify(value),
        );
        assert.equal(
          await arrivesUnchanged('x-custom', value),
          false,
          `${JSON.stringify(value)}: not sendable unchanged`,
        );
      }
      for (const name of ['x custom', 'x\u00e9', 'x:y', '']) {
        await assert.rejects(
          api.svix.endpoint.patchHeaders(appId, ep.id, { headers: {}, deleteHeaders: [name] }),
          refused(['body', 'deleteHeaders', 0]),
          JSON.stringify(name),
        );
      }
      const sendable = 'visible ASCII, inner space and\ttab: ~!';
      await api.svix.endpoint.setHeaders(appId, ep.id, { headers: { 'x-custom': sendable } });
      assert.deepEqual((await api.svix.endpoint.getHeaders(appId, ep.id)).headers, { 'x-custom': sendable });
      assert.equal(await arrivesUnchanged('x-custom', sendable), true);
    },
  );
  test(
    'two header names that differ only in case (X-A and x-a) are refused 422 at body.headers on endpoint ' +
      'create, update and patch and on the headers routes (PUT and PATCH), and nothing is stored',
    async () => {
      const ep = await api.svix.endpoint.create(appId, { url: 'http://127.0.0.1:9/dup', headers: { 'x-keep': 'k' } });
      const base = `/api/v1/app/${appId}/endpoint`;
      const dup = '{"X-A":"1","x-a":"2"}';
      const cases: [string, string, string, readonly (string | number)[]][] = [
        ['POST', base, `{"url":"http://127.0.0.1:9/d","headers":${dup}}`, ['body', 'headers']],
        ['PUT', `${base}/${ep.id}`, `{"url":"http://127.0.0.1:9/dup","headers":${dup}}`, ['body', 'headers']],
        ['PATCH', `${base}/${ep.id}`, `{"headers":${dup}}`, ['body', 'headers']],
        ['PUT', `${base}/${ep.id}/headers`, `{"headers":${dup}}`, ['body', 'headers']],
        ['PATCH', `${base}/${ep.id}/headers`, `{"headers":${dup}}`, ['body', 'headers']],
        ['PATCH', `${base}/${ep.id}/headers`, '{"headers":{"X-A":"1","x-a":null}}', ['body', 'headers']],
        [
          'PATCH',
          `${base}/${ep.id}/headers`,
          '{"headers":{"X-A":"1"},"deleteHeaders":["x-a"]}',
          ['body', 'deleteHeaders', 0],
        ],
      ];
      const endpoints = async () =>
        Number((await api.database.db.query<{ n: string }>('SELECT count(*) AS n FROM endpoints')).rows[0]?.n);
      const before = await endpoints();
      for (const [method, path, body, loc] of cases) {
        const res = await api.request(method, path, { body });
        const answer = (await res.json()) as { code: string; detail: { loc: unknown[]; msg: string; type: string }[] };
        assert.equal(res.status, 422, `${method} ${path} ${body}`);
        assert.equal(answer.code, 'validation');
        assert.deepEqual(answer.detail[0]?.loc, loc, `${method} ${path} ${body}`);
        assert.equal(answer.detail[0]?.type, 'value_error.duplicate_header');
      }
      assert.equal(await endpoints(), before);
      assert.deepEqual((await api.svix.endpoint.getHeaders(appId, ep.id)).headers, { 'x-keep': 'k' });
      const distinct = await api.request('PUT', `${base}/${ep.id}/headers`, {
        body: '{"headers":{"X-A":"1","X-B":"2"}}',
      });
      assert.equal(distinct.status, 204);
      assert.deepEqual((await api.svix.endpoint.getHeaders(appId, ep.id)).headers, { 'x-a': '1', 'x-b': '2' });
    },
  );
});
