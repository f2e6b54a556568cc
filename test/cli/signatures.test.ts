/**
 * `tidings sign` and `tidings verify` as processes: the headers `sign` prints verify with the public
 * `standardwebhooks` package; `verify` accepts them and names the exact reason of each failure (wrong secret,
 * stale timestamp, header missing, body changed) with exit code 1, and a usage problem with 2.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { encodeSecret } from '../../src/domain/signing.ts';
import { json, runCli } from './cli-harness.ts';

const secret = encodeSecret(randomBytes(32));
const body = '{"type":"order.paid",  "amount": 12345678901234567890}';
let dir: string;
let headers: Record<string, string>;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tidings-sign-'));
  await writeFile(join(dir, 'body'), body);
  const signed = await runCli(['sign', join(dir, 'body'), '--json', '--id', 'msg_cli'], {
    env: { TIDINGS_WEBHOOK_SECRET: secret },
  });
  assert.equal(signed.code, 0, signed.stderr);
  headers = json<Record<string, string>>(signed);
});

test('sign prints both header sets, and the public standardwebhooks verifier accepts them', () => {
  assert.deepEqual(Object.keys(headers).sort(), [
    'svix-id',
    'svix-signature',
    'svix-timestamp',
    'webhook-id',
    'webhook-signature',
    'webhook-timestamp',
  ]);
  assert.equal(headers['webhook-id'], 'msg_cli');
  assert.doesNotThrow(() => new Webhook(secret).verify(body, headers));
});

test('verify accepts the signed request and names the reason of each failure', async () => {
  const stale = Math.floor(Date.now() / 1000) - 3600;
  const staleHeaders = json<Record<string, string>>(
    await runCli(['sign', '--secret', secret, '--timestamp', String(stale), '--headers', 'webhook', '--json'], {
      stdin: body,
    }),
  );
  const lines = (h: Record<string, string>): string =>
    `POST /webhooks HTTP/1.1\r\nHost: example\r\n${Object.entries(h)
      .map(([k, v]) => `${k}: ${v}`)
      .join('\r\n')}\r\n\r\n`;
  await writeFile(join(dir, 'headers'), lines(headers));
  await writeFile(join(dir, 'headers.json'), JSON.stringify(headers));
  await writeFile(join(dir, 'stale'), lines(staleHeaders));
  await writeFile(
    join(dir, 'unsigned'),
    lines({ 'webhook-id': 'msg_cli', 'webhook-timestamp': headers['webhook-timestamp']! }),
  );
  await writeFile(join(dir, 'body-newline'), `${body}\n`);
  await writeFile(join(dir, 'body-other'), body.replace('order', 'refund'));
  const other = encodeSecret(randomBytes(32));
  const cases: [string, string[], number, RegExp][] = [
    [
      'captured headers',
      [join(dir, 'headers'), join(dir, 'body'), '--secret', secret],
      0,
      /^valid: msg_cli signed \d+ s old with key_[0-9a-f]{16}\n$/,
    ],
    ['headers as JSON', [join(dir, 'headers.json'), join(dir, 'body'), '--secret', secret], 0, /^valid: /],
    [
      'wrong secret',
      [join(dir, 'headers'), join(dir, 'body'), '--secret', other],
      1,
      /^no signature matches: wrong secret \(this one is key_/,
    ],
    [
      'stale timestamp',
      [join(dir, 'stale'), join(dir, 'body'), '--secret', secret],
      1,
      /^stale timestamp: signed 36\d\d s old, beyond the 300 s tolerance/,
    ],
    [
      'header missing',
      [join(dir, 'unsigned'), join(dir, 'body'), '--secret', secret],
      1,
      /^header missing: webhook-signature \(or svix-signature\)\n$/,
    ],
    [
      'body changed',
      [join(dir, 'headers'), join(dir, 'body-newline'), '--secret', secret],
      1,
      /^body changed: the signature matches the body before a trailing newline was added/,
    ],
    [
      'body edited',
      [join(dir, 'headers'), join(dir, 'body-other'), '--secret', secret],
      1,
      /an HMAC cannot tell the two apart/,
    ],
    ['malformed secret', [join(dir, 'headers'), join(dir, 'body'), '--secret', 'whsec_short'], 2, /^$/],
    ['missing file', [join(dir, 'nope'), join(dir, 'body'), '--secret', secret], 2, /^$/],
  ];
  const runs = await Promise.all(cases.map(([, args]) => runCli(['verify', ...args])));
  for (const [i, [what, , code, out]] of cases.entries()) {
    assert.equal(runs[i]!.code, code, `${what}: ${runs[i]!.stdout} ${runs[i]!.stderr}`);
    assert.match(runs[i]!.stdout, out, what);
  }
  assert.match(runs[7]!.stderr, /the secret is malformed/);
  const verdict = json<{ ok: boolean; reason: string }>(
    await runCli(['verify', join(dir, 'stale'), join(dir, 'body'), '--secret', secret, '--json']),
  );
  assert.deepEqual(verdict, { ...verdict, ok: false, reason: 'timestamp_stale' });
});
