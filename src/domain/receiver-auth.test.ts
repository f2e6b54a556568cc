import assert from 'node:assert/strict';
import { test } from 'node:test';
import { maskSecret, receiverAuthIssues, tokenUrlIssue } from './receiver-auth.ts';

const ALLOW = ['127.0.0.1/32', '10.0.0.0/8'];

test('a secret is masked: never more than its last 2 characters, and those only from 16 characters on', () => {
  for (const [secret, masked] of [
    ['', '••••'],
    ['p', '••••'],
    ['fifteen-chars-x', '••••'],
    ['sixteen-chars-xy', '••••xy'],
    ['a'.repeat(200) + 'ZZ', '••••ZZ'],
  ] as const)
    assert.equal(maskSecret(secret), masked, secret);
});

test('the token URL rule: https; http only to a literal private address the allow-list opens', () => {
  for (const [url, verdict] of [
    ['https://idp.example.com/oauth/token', null],
    ['https://idp.example.com:8443/t?tenant=a', null],
    ['http://127.0.0.1:9000/token', null],
    ['http://10.1.2.3/token', null],
    ['http://idp.example.com/token', /must be https/],
    ['http://192.168.1.1/token', /must be https/],
    ['http://8.8.8.8/token', /must be https/],
    ['ftp://idp.example.com/token', /must be https/],
    ['https://u:p@idp.example.com/t', /credentials/],
    ['https://idp.example.com/t#frag', /fragment/],
    ['https://192.168.1.1/t', /refused address/],
    ['https://localhost/t', /refused address/],
    ['idp.example.com/token', /absolute URL/],
  ] as const) {
    const got = tokenUrlIssue(url, ALLOW);
    if (verdict === null) assert.equal(got, null, url);
    else assert.match(got ?? '', verdict, url);
  }
});

test('each bad field is named; a valid configuration has no issue', () => {
  const locs = (auth: Parameters<typeof receiverAuthIssues>[0]) =>
    receiverAuthIssues(auth, ALLOW).map((i) => i.loc.join('.'));
  const oauth2 = { tokenUrl: 'https://idp.example/t', clientId: 'c', clientSecret: 's', scope: null, audience: null };
  assert.deepEqual(locs({ basic: { username: 'u', password: 'p' } }), []);
  assert.deepEqual(locs({ oauth2 }), []);
  assert.deepEqual(locs({}), ['body']);
  assert.deepEqual(locs({ basic: { username: 'u', password: 'p' }, oauth2 }), ['body.oauth2']);
  assert.deepEqual(locs({ basic: { username: 'a:b', password: '' } }), ['body.basic.username', 'body.basic.password']);
  assert.deepEqual(locs({ basic: { username: 'u', password: 'x'.repeat(1025) } }), ['body.basic.password']);
  assert.deepEqual(locs({ oauth2: { ...oauth2, scope: 'a\tb', audience: '' } }), [
    'body.oauth2.scope',
    'body.oauth2.audience',
  ]);
  assert.deepEqual(locs({ mtls: { certificate: null, key: null, ca: null } }), ['body.mtls']);
  assert.deepEqual(locs({ mtls: { certificate: 'x', key: null, ca: null } }), ['body.mtls.key']);
  assert.deepEqual(locs({ mtls: { certificate: null, key: null, ca: 'not pem' } }), ['body.mtls.ca']);
});
