/**
 * Values that would be stored as one thing and act as another are refused at write time (422), through the
 * official client: endpoint header values the HTTP client cannot send, endpoint URLs the URL parser would
 * contact differently from how they were typed, and strings holding a lone surrogate. Runs on both engines.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ENGINES } from '../support/db.ts';
import { startApi, type ApiHarness } from './api-harness.ts';

const rejected = (status: number, code: string, loc?: readonly (string | number)[]) => (e: unknown) => {
  const error = e as { code?: number; body?: { code?: string; detail?: { loc: unknown[] }[] } };
  if (error.code !== status || error.body?.code !== code) return false;
  return loc === undefined || JSON.stringify(error.body.detail?.[0]?.loc) === JSON.stringify(loc);
};

for (const engine of ENGINES) {
  describe(`write-time validation (${engine.name})`, () => {
    let api: ApiHarness;
    let appId: string;
    before(async () => {
      api = await startApi(engine.fresh);
      appId = (await api.svix.application.create({ name: 'validation' })).id;
    });
    after(async () => api?.close());

    test(
      'an endpoint header value with a control character or non-ASCII is refused with 422 at write time, on ' +
        'create, set and patch',
      async () => {
        const ep = await api.svix.endpoint.create(appId, { url: 'http://127.0.0.1:9/headers' });
        for (const value of ['a\u0001b', 'tab\tok\u007f', 'caf\u00e9', 'emoji \u{1F600}', 'line\nbreak']) {
          const headers = { 'x-custom': value };
          await assert.rejects(
            api.svix.endpoint.create(appId, { url: 'http://127.0.0.1:9/h', headers }),
            rejected(422, 'validation', ['body', 'headers', 'x-custom']),
            JSON.stringify(value),
          );
          await assert.rejects(
            api.svix.endpoint.setHeaders(appId, ep.id, { headers }),
            rejected(422, 'validation'),
            JSON.stringify(value),
          );
          await assert.rejects(
            api.svix.endpoint.patchHeaders(appId, ep.id, { headers }),
            rejected(422, 'validation'),
            JSON.stringify(value),
          );
        }
        await api.svix.endpoint.setHeaders(appId, ep.id, {
          headers: { 'x-custom': 'visible ASCII, space and\ttab: ~!' },
        });
        assert.deepEqual((await api.svix.endpoint.getHeaders(appId, ep.id)).headers, {
          'x-custom': 'visible ASCII, space and\ttab: ~!',
        });
      },
    );

    test(
      'endpoint URLs are stored as they will be contacted: http:///path, tab, CR, LF, a backslash and port 0 are ' +
        'refused; case, default ports and dot segments are normalised',
      async () => {
        for (const url of [
          'http:///path',
          'http:/one-slash.example',
          'http:no-slash.example',
          'http://exa\tmple.com/',
          'http://example.com/a\r\nb',
          'http://example.com/a b',
          ' http://example.com/',
          'http://example.com:0/',
          'http:\\\\example.com\\path',
          'https://example.com\\@evil.example/',
        ]) {
          await assert.rejects(
            api.svix.endpoint.create(appId, { url }),
            rejected(422, 'url_not_allowed'),
            JSON.stringify(url),
          );
        }
        const ep = await api.svix.endpoint.create(appId, { url: 'HTTP://Example.COM:80/a/./b/../c?q=1' });
        assert.equal(ep.url, 'http://example.com/a/c?q=1');
        assert.equal((await api.svix.endpoint.get(appId, ep.id)).url, 'http://example.com/a/c?q=1');
        const stored = await api.database.db.query<{ url: string }>('SELECT url FROM endpoints WHERE id = $1', [ep.id]);
        assert.equal(stored.rows[0]!.url, 'http://example.com/a/c?q=1', 'stored as contacted');
        await assert.rejects(
          api.svix.endpoint.patch(appId, ep.id, { url: 'http:///elsewhere' }),
          rejected(422, 'url_not_allowed'),
        );
        const patched = await api.svix.endpoint.patch(appId, ep.id, { url: 'https://EXAMPLE.com:443' });
        assert.equal(patched.url, 'https://example.com/');
      },
    );

    test(
      'a lone surrogate in any string field is refused with 422, so two different eventIds cannot collide as ' +
        'U+FFFD',
      async () => {
        await assert.rejects(
          api.svix.message.create(appId, { eventType: 'x.y', eventId: 'evt-\ud800', payload: {} }),
          rejected(422, 'validation', ['body', 'eventId']),
        );
        await assert.rejects(
          api.svix.message.create(appId, { eventType: 'x.y', eventId: 'evt-\udfff', payload: {} }),
          rejected(422, 'validation', ['body', 'eventId']),
        );
        await assert.rejects(
          api.svix.application.create({ name: 'bad \udc00 name' }),
          rejected(422, 'validation', ['body', 'name']),
        );
        await assert.rejects(
          api.svix.message.create(appId, { eventType: 'x.y', payload: { list: ['ok', 'lone \ud83d'] } }),
          rejected(422, 'validation', ['body', 'payload', 'list', 1]),
        );
        const keyed = await api.request('POST', `/api/v1/app/${appId}/msg`, {
          body: '{"eventType":"x.y","payload":{"\\udead":1}}',
        });
        assert.equal(keyed.status, 422, 'an object key too');
        const listed = await api.svix.message.list(appId);
        assert.equal(listed.data.length, 0, 'nothing was stored');
        // A pair is one character and passes; so does an escaped backslash followed by "ud800".
        const paired = await api.svix.message.create(appId, {
          eventType: 'x.y',
          eventId: 'evt-\ud83d\ude00',
          payload: { text: '\\ud800' },
        });
        assert.equal(paired.eventId, 'evt-\u{1F600}');
      },
    );
  });
}
