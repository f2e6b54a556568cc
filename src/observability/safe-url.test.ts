import assert from 'node:assert/strict';
import { test } from 'node:test';
import { redactUrlsIn, urlWithoutCredentials } from './safe-url.ts';

test('a URL reaches a span or a log line without userinfo, query or fragment', () => {
  assert.equal(
    urlWithoutCredentials('https://user:pw@hooks.example.com:8443/in?token=abc&x=1#f')?.href,
    'https://hooks.example.com:8443/in',
  );
  assert.equal(urlWithoutCredentials('not a url'), null);
  assert.equal(
    redactUrlsIn(
      'export to https://otel:s3cret@collector.example.com/v1/traces?api_key=s3cret failed: ' +
        '"http://x/?k=s3cret" and postgresql://u:s3cret@h/db?password=s3cret',
    ),
    'export to https://collector.example.com/v1/traces failed: "http://x/" and postgresql://h/db',
  );
});
