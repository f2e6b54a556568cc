import { after, before, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { isIP } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer as createTlsServer, createSecureContext } from 'node:tls';
import type { SendResult } from '../../src/domain/attempt-outcome.ts';
import {
  createHttpSender,
  UNRESOLVED_NAME_DETAIL,
  type HttpSenderOptions,
} from '../../src/adapters/http-sender/http-sender.ts';
import type { LookupFunction } from '../../src/adapters/http-sender/guarded-connect.ts';
import type { Sender } from '../../src/ports/sender.ts';
import { healthyClosing, redirect, startCanary, startReceiver, type Receiver } from '../support/hostile-receivers.ts';

// The SSRF guard (docs/design.md#security), end to end: the allow-list holds only 127.0.0.1/32 (standing in for "the
// public internet"; no test reaches a real public address). Canaries on 127.0.0.2 and ::1 listen on the SAME port as
// the receiver on 127.0.0.1, so any path that checks one address and connects to another (a second lookup,
// an unchecked literal form) lands on a canary, which counts the connection. Every spelling below must
// end as `blocked_address` with zero canary connections.

const OPTIONS: HttpSenderOptions = {
  connectTimeoutMs: 1000,
  headersTimeoutMs: 1000,
  bodyTimeoutMs: 1000,
  deadlineMs: 3000,
  maxResponseBytes: 64 * 1024,
  responsePrefixBytes: 1024,
  maxSocketsPerOrigin: 4,
  egressAllowlist: ['127.0.0.1/32'],
  userAgent: 'Tidings/test',
};

let target: Receiver;
let canary4: Receiver;
let canary6: Receiver | null = null;
let noIPv6Reason = '';
const senders: Sender[] = [];

/** A sender with the test options; closed after the file. */
function sender(extra: Partial<HttpSenderOptions> = {}): Sender {
  const s = createHttpSender({ ...OPTIONS, ...extra });
  senders.push(s);
  return s;
}

function send(s: Sender, url: string): Promise<SendResult> {
  return s.send({ url, headers: { 'content-type': 'application/json' }, body: Buffer.from('{"type":"ssrf.probe"}') });
}

/** A resolver answering `answers[i]` to its i-th call (the last one from then on), counting calls. */
function scriptedResolver(...answers: readonly (readonly string[])[]): {
  readonly lookup: LookupFunction;
  readonly calls: () => number;
  readonly names: string[];
} {
  let calls = 0;
  const names: string[] = [];
  const lookup: LookupFunction = (hostname, _options, callback) => {
    const answer = answers[Math.min(calls, answers.length - 1)] ?? [];
    calls += 1;
    names.push(hostname);
    process.nextTick(
      callback,
      null,
      answer.map((address) => ({ address, family: isIP(address) === 6 ? 6 : 4 })),
    );
  };
  return { lookup, calls: () => calls, names };
}

function assertCanariesUntouched(): void {
  assert.equal(canary4.connections(), 0, 'the canary on 127.0.0.2 was reached');
  if (canary6 !== null) assert.equal(canary6.connections(), 0, 'the canary on ::1 was reached');
}

function assertBlocked(result: SendResult, label: string): void {
  assert.equal(result.type, 'error', `${label}: expected blocked_address, got ${JSON.stringify(result)}`);
  assert.equal(result.type === 'error' && result.errorKind, 'blocked_address', `${label}: ${JSON.stringify(result)}`);
}

/**
 * A name that resolved to a refused address: `dns` with the words of a failed lookup for the tenant, the reason for the
 * operator.
 */
function assertRefusedName(result: SendResult, label: string): void {
  const text = `${label}: ${JSON.stringify(result)}`;
  assert.ok(
    result.type === 'error' &&
      result.errorKind === 'dns' &&
      result.detail === UNRESOLVED_NAME_DETAIL &&
      result.durationMs === 0,
    text,
  );
  assert.match(String(result.network?.reason), /TIDINGS_REFUSED_NAME: [\w.]+ resolved to/, text);
  assert.equal(result.network?.decidedBy, 'TIDINGS_EGRESS_ALLOWLIST', text);
}

before(async () => {
  // Bounded: a port free on 127.0.0.1 is almost always free on 127.0.0.2 and ::1 as well.
  for (let attempt = 1; attempt <= 5; attempt += 1) {
    const receiver = await startReceiver(healthyClosing);
    try {
      canary4 = await startCanary('127.0.0.2', receiver.port);
    } catch {
      await receiver.close();
      continue;
    }
    target = receiver;
    try {
      canary6 = await startCanary('::1', receiver.port);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? '';
      if (code !== 'EADDRNOTAVAIL' && code !== 'EAFNOSUPPORT') throw error;
      noIPv6Reason = `no IPv6 loopback on this machine (${code}); the ::1 canary is skipped`;
      console.log(noIPv6Reason);
    }
    return;
  }
  throw new Error('no port free on 127.0.0.1, 127.0.0.2 and ::1 after 5 tries');
});

after(async () => {
  await Promise.all(senders.map((s) => s.close()));
  await Promise.all([target?.close(), canary4?.close(), canary6?.close()]);
});

test('the allow-listed receiver on 127.0.0.1 is reachable (the control for every refusal below)', async () => {
  const result = await send(sender(), target.url);
  assert.equal(result.type === 'response' && result.statusCode, 200, JSON.stringify(result));
  assertCanariesUntouched();
});

test('every literal spelling of a canary address is refused before a connection is made', async (t: TestContext) => {
  const p = target.port;
  const v4 = [
    `http://127.0.0.2:${p}/`,
    `http://2130706434:${p}/`,
    `http://0x7f000002:${p}/`,
    `http://017700000002:${p}/`,
    `http://0177.0.0.2:${p}/`,
    `http://0x7f.0.0.2:${p}/`,
    `http://127.2:${p}/`,
    `http://0x7f.2:${p}/`,
    `http://127.0.0.2.:${p}/`,
    `http://%31%32%37.0.0.2:${p}/`,
    `HTTP://127.0.0.2:${p}/upper`,
    `http://127.000.000.002:${p}/`,
  ];
  const v6 = [
    `http://[::1]:${p}/`,
    `http://[0:0:0:0:0:0:0:1]:${p}/`,
    `http://[0000:0000:0000:0000:0000:0000:0000:0001]:${p}/`,
    `http://[::ffff:127.0.0.2]:${p}/`,
    `http://[::FFFF:7F00:2]:${p}/`,
    `http://[::127.0.0.2]:${p}/`,
    `http://[64:ff9b::7f00:2]:${p}/`,
    `http://[2002:7f00:2::]:${p}/`,
  ];
  const names = [
    `http://localhost:${p}/`,
    `http://LOCALHOST.:${p}/`,
    `http://canary.localhost:${p}/`,
    `http://Canary.LocalHost.:${p}/`,
  ];
  const s = sender();
  for (const url of [...v4, ...v6, ...names]) {
    const result = await send(s, url);
    assertBlocked(result, url);
    t.diagnostic(`${url} → ${result.type === 'error' ? result.detail : ''}`);
  }
  assertCanariesUntouched();
});

test(
  'a name is refused when the injected resolver answers with any refused address; the tenant reads it as a name ' +
    'that does not resolve',
  async () => {
    const cases: readonly (readonly string[])[] = [
      ['127.0.0.2'],
      ['127.0.0.1', '127.0.0.2'],
      ['127.0.0.2', '127.0.0.1'],
      ['::1'],
      ['127.0.0.1', '::1'],
      ['::ffff:127.0.0.2'],
      ['2130706434'],
      ['0x7f.0.0.2'],
    ];
    for (const answer of cases) {
      const resolver = scriptedResolver(answer);
      const result = await send(sender({ lookup: resolver.lookup }), `http://internal.test:${target.port}/`);
      assertRefusedName(result, answer.join(','));
      assert.equal(resolver.calls(), 1, 'exactly one lookup per connection');
    }
    assertCanariesUntouched();
  },
);

test('a resolver failure or an empty answer is a dns error, not a connection anywhere', async () => {
  const failing: LookupFunction = (hostname, _options, callback) => {
    process.nextTick(
      callback,
      Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }),
      [],
    );
  };
  const failed = await send(sender({ lookup: failing }), `http://nowhere.test:${target.port}/`);
  assert.equal(failed.type === 'error' && failed.errorKind, 'dns', JSON.stringify(failed));
  assert.ok(
    failed.type === 'error' && failed.detail === UNRESOLVED_NAME_DETAIL && failed.durationMs === 0,
    'the same words and duration as a refused name',
  );
  assert.match(String(failed.network?.reason), /lookup of nowhere\.test failed: ENOTFOUND/);
  const empty = await send(sender({ lookup: scriptedResolver([]).lookup }), `http://empty.test:${target.port}/`);
  assert.equal(empty.type === 'error' && empty.errorKind, 'dns', JSON.stringify(empty));
  assertCanariesUntouched();
});

test(
  'DNS rebinding (127.0.0.1, then 127.0.0.2) cannot switch the address: one lookup per connection, the second ' +
    'answer is refused',
  async () => {
    const resolver = scriptedResolver(['127.0.0.1'], ['127.0.0.2']);
    const s = sender({ lookup: resolver.lookup });
    const before = target.requests().length;
    const url = `http://rebind.test:${target.port}/hook`;
    const first = await send(s, url);
    assert.equal(first.type === 'response' && first.statusCode, 200, JSON.stringify(first));
    // The receiver closes every connection, so the second attempt needs a new connection and a new lookup.
    const second = await send(s, url);
    assertRefusedName(second, 'second answer 127.0.0.2');
    assert.equal(resolver.calls(), 2, 'one lookup per connection, none between the check and the connect');
    assert.deepEqual(resolver.names, ['rebind.test', 'rebind.test']);
    assert.equal(target.requests().length - before, 1, 'only the checked address got a request');
    assertCanariesUntouched();
  },
);

test('a redirect from the allowed receiver to a canary is a response with its Location, never followed', async () => {
  const redirector = await startReceiver(redirect(canary4.url));
  try {
    const result = await send(sender(), redirector.url);
    assert.equal(result.type, 'response');
    assert.equal(result.type === 'response' && result.statusCode, 302);
    assert.equal(result.type === 'response' && result.location, canary4.url);
    assert.equal(redirector.requests().length, 1);
  } finally {
    await redirector.close();
  }
  assertCanariesUntouched();
});

test('proxy environment variables are ignored by the delivery agent', async () => {
  const names = [
    'HTTP_PROXY',
    'http_proxy',
    'HTTPS_PROXY',
    'https_proxy',
    'ALL_PROXY',
    'all_proxy',
    'NO_PROXY',
    'no_proxy',
  ];
  const saved = new Map(names.map((name) => [name, process.env[name]]));
  try {
    for (const name of names) process.env[name] = name.toLowerCase().startsWith('no') ? '' : canary4.url;
    const result = await send(sender(), target.url);
    assert.equal(result.type === 'response' && result.statusCode, 200, JSON.stringify(result));
  } finally {
    for (const [name, value] of saved) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
  assertCanariesUntouched();
});

/** A self-signed certificate for `sni.test`, made with the openssl CLI; null when openssl is missing. */
function selfSignedCertificate(): { key: string; cert: string } | null {
  const dir = mkdtempSync(join(tmpdir(), 'tidings-tls-'));
  try {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=sni.test',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
      ],
      { stdio: 'ignore' },
    );
    return { key: readFileSync(join(dir, 'key.pem'), 'utf8'), cert: readFileSync(join(dir, 'cert.pem'), 'utf8') };
  } catch {
    return null;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test(
  'https: the connection goes to the checked address while TLS ' + 'keeps the host name for SNI and verification',
  async (t: TestContext) => {
    const pair = selfSignedCertificate();
    if (pair === null) {
      t.skip('the openssl CLI is not available to make a test certificate');
      return;
    }
    const context = createSecureContext(pair);
    const servernames: string[] = [];
    const server = createTlsServer({
      ...pair,
      SNICallback: (servername, callback) => {
        servernames.push(servername);
        callback(null, context);
      },
    });
    server.on('tlsClientError', () => undefined);
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    try {
      const address = server.address();
      assert.ok(address !== null && typeof address !== 'string');
      const resolver = scriptedResolver(['127.0.0.1']);
      const result = await send(sender({ lookup: resolver.lookup }), `https://sni.test:${address.port}/`);
      // The certificate is self-signed, so verification (on) refuses it: proof that it is checked.
      assert.equal(result.type === 'error' && result.errorKind, 'tls', JSON.stringify(result));
      assert.deepEqual(servernames, ['sni.test']);
      assert.equal(resolver.calls(), 1);
    } finally {
      server.close();
      await once(server, 'close');
    }
    assertCanariesUntouched();
  },
);

test('no canary saw a connection over the whole file', (t: TestContext) => {
  if (noIPv6Reason !== '') t.diagnostic(noIPv6Reason);
  assertCanariesUntouched();
});
