import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  assertValidAllowlist,
  checkEndpointUrl,
  isAddressAllowed,
  isLocalhostName,
  REFUSED_RANGES,
} from './egress-policy.ts';

// The table of docs/design.md#security: every refused form, and public forms that pass. Addresses are parsed only,
// never contacted.

/** [address, a fragment the refusal reason must contain]. Each range: its first, an inner and its last address. */
const REFUSED: readonly (readonly [string, string])[] = [
  ['0.0.0.0', '0.0.0.0/8'],
  ['0.1.2.3', '0.0.0.0/8'],
  ['0.255.255.255', '0.0.0.0/8'],
  ['10.0.0.0', '10.0.0.0/8'],
  ['10.1.2.3', '10.0.0.0/8'],
  ['10.255.255.255', '10.0.0.0/8'],
  ['100.64.0.0', '100.64.0.0/10'],
  ['100.100.100.200', '100.64.0.0/10'],
  ['100.127.255.255', '100.64.0.0/10'],
  ['127.0.0.1', '127.0.0.0/8'],
  ['127.0.0.2', '127.0.0.0/8'],
  ['127.255.255.255', '127.0.0.0/8'],
  ['169.254.0.0', '169.254.0.0/16'],
  ['169.254.169.254', '169.254.0.0/16'],
  ['169.254.255.255', '169.254.0.0/16'],
  ['172.16.0.0', '172.16.0.0/12'],
  ['172.20.1.1', '172.16.0.0/12'],
  ['172.31.255.255', '172.16.0.0/12'],
  ['192.0.0.0', '192.0.0.0/24'],
  ['192.0.0.170', '192.0.0.0/24'],
  ['192.0.0.255', '192.0.0.0/24'],
  ['192.0.2.0', '192.0.2.0/24'],
  ['192.0.2.1', '192.0.2.0/24'],
  ['192.0.2.255', '192.0.2.0/24'],
  ['192.88.99.0', '192.88.99.0/24'],
  ['192.88.99.1', '192.88.99.0/24'],
  ['192.88.99.255', '192.88.99.0/24'],
  ['192.168.0.0', '192.168.0.0/16'],
  ['192.168.1.1', '192.168.0.0/16'],
  ['192.168.255.255', '192.168.0.0/16'],
  ['198.18.0.0', '198.18.0.0/15'],
  ['198.19.1.1', '198.18.0.0/15'],
  ['198.19.255.255', '198.18.0.0/15'],
  ['198.51.100.0', '198.51.100.0/24'],
  ['198.51.100.7', '198.51.100.0/24'],
  ['198.51.100.255', '198.51.100.0/24'],
  ['203.0.113.0', '203.0.113.0/24'],
  ['203.0.113.9', '203.0.113.0/24'],
  ['203.0.113.255', '203.0.113.0/24'],
  ['224.0.0.0', '224.0.0.0/4'],
  ['239.255.255.250', '224.0.0.0/4'],
  ['239.255.255.255', '224.0.0.0/4'],
  ['240.0.0.0', '240.0.0.0/4'],
  ['250.1.2.3', '240.0.0.0/4'],
  ['255.255.255.254', '240.0.0.0/4'],
  ['255.255.255.255', '255.255.255.255/32'],
  // IPv4 spellings other than dotted decimal are read as inet_aton reads them.
  ['2130706433', '127.0.0.0/8'],
  ['0x7f000001', '127.0.0.0/8'],
  ['0177.0.0.1', '127.0.0.0/8'],
  ['127.1', '127.0.0.0/8'],
  ['0x7f.1', '127.0.0.0/8'],
  // IPv6
  ['::', '::/128'],
  ['0:0:0:0:0:0:0:0', '::/128'],
  ['::1', '::1/128'],
  ['0:0:0:0:0:0:0:1', '::1/128'],
  ['0000:0000:0000:0000:0000:0000:0000:0001', '::1/128'],
  ['::ffff:127.0.0.1', '127.0.0.0/8'],
  ['::ffff:7f00:1', '127.0.0.0/8'],
  ['::FFFF:7F00:2', '127.0.0.0/8'],
  ['::ffff:10.0.0.1', '10.0.0.0/8'],
  ['::ffff:169.254.169.254', '169.254.0.0/16'],
  ['::ffff:0.0.0.0', '0.0.0.0/8'],
  ['0:0:0:0:0:ffff:c0a8:0101', '192.168.0.0/16'],
  ['::127.0.0.2', '127.0.0.0/8'],
  ['::7f00:1', '127.0.0.0/8'],
  ['::10.0.0.1', '10.0.0.0/8'],
  ['::0.0.0.2', '0.0.0.0/8'],
  ['64:ff9b::7f00:1', '64:ff9b::/96'],
  ['64:ff9b::10.0.0.1', 'embedding 10.0.0.1'],
  ['64:ff9b::93.184.216.34', '64:ff9b::/96'],
  ['64:ff9b:1::1', '64:ff9b:1::/48'],
  ['64:ff9b:1:ffff:ffff:ffff:ffff:ffff', '64:ff9b:1::/48'],
  ['2002::', '2002::/16'],
  ['2002:7f00:1::', 'embedding 127.0.0.1'],
  ['2002:a9fe:a9fe::1', 'embedding 169.254.169.254'],
  ['2002:5db8:d822::1', '2002::/16'],
  ['2001::', '2001::/32'],
  ['2001:0:4136:e378:8000:63bf:3fff:fdd2', '2001::/32'],
  ['2001:0:ffff:ffff:ffff:ffff:ffff:ffff', '2001::/32'],
  ['2001:db8::', '2001:db8::/32'],
  ['2001:db8::1', '2001:db8::/32'],
  ['2001:db8:ffff:ffff:ffff:ffff:ffff:ffff', '2001:db8::/32'],
  ['fc00::', 'fc00::/7'],
  ['fd12:3456:789a::1', 'fc00::/7'],
  ['fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', 'fc00::/7'],
  ['fe80::', 'fe80::/10'],
  ['fe80::1', 'fe80::/10'],
  ['fe80::1%eth0', 'fe80::/10'],
  ['febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff', 'fe80::/10'],
  ['fec0::', 'fec0::/10'],
  ['fec0::1', 'fec0::/10'],
  ['feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', 'fec0::/10'],
  ['ff00::', 'ff00::/8'],
  ['ff02::1', 'ff00::/8'],
  ['ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', 'ff00::/8'],
  ['100::', '100::/64'],
  ['100::1', '100::/64'],
  ['100::ffff:ffff:ffff:ffff', '100::/64'],
  // Outside 2000::/3: not routable today (e.g. RFC 6145 IPv4-translated ::ffff:0:a.b.c.d).
  ['::ffff:0:7f00:1', '2000::/3'],
  ['1::1', '2000::/3'],
  ['4000::1', '2000::/3'],
  // Not addresses at all.
  ['', 'not an IP address'],
  ['localhost', 'not an IP address'],
  ['127.0.0.1:80', 'not an IP address'],
  ['1.2.3.4.5', 'not an IP address'],
];

const ALLOWED_PUBLIC: readonly string[] = [
  '93.184.216.34',
  '8.8.8.8',
  '1.1.1.1',
  '9.255.255.255',
  '11.0.0.0',
  '100.63.255.255',
  '100.128.0.0',
  '126.255.255.255',
  '128.0.0.0',
  '169.253.255.255',
  '172.15.255.255',
  '172.32.0.0',
  '192.0.1.1',
  '192.0.3.0',
  '192.88.98.255',
  '192.167.255.255',
  '192.169.0.0',
  '198.17.255.255',
  '198.20.0.0',
  '223.255.255.255',
  '2606:4700::1',
  '2606:4700:4700::1111',
  '2a00:1450:4001:81c::200e',
  '2001:4860:4860::8888',
  '2003::1',
  '::ffff:93.184.216.34',
  '::ffff:5db8:d822',
];

for (const [ip, fragment] of REFUSED) {
  test(`refuses ${JSON.stringify(ip)} (${fragment})`, () => {
    const verdict = isAddressAllowed(ip, []);
    assert.equal(verdict.allowed, false);
    assert.ok(!verdict.allowed && verdict.reason.includes(fragment), !verdict.allowed ? verdict.reason : '');
  });
}

for (const ip of ALLOWED_PUBLIC) {
  test(`allows the public address ${ip}`, () => {
    assert.deepEqual(isAddressAllowed(ip, []), { allowed: true });
  });
}

test('every refused range of docs/design.md#security is in the table and is exercised above', () => {
  const issue5 = [
    '0.0.0.0/8',
    '10.0.0.0/8',
    '100.64.0.0/10',
    '127.0.0.0/8',
    '169.254.0.0/16',
    '172.16.0.0/12',
    '192.0.0.0/24',
    '192.0.2.0/24',
    '192.88.99.0/24',
    '192.168.0.0/16',
    '198.18.0.0/15',
    '198.51.100.0/24',
    '203.0.113.0/24',
    '224.0.0.0/4',
    '240.0.0.0/4',
    '255.255.255.255/32',
    '::/128',
    '::1/128',
    '64:ff9b::/96',
    '64:ff9b:1::/48',
    '2002::/16',
    '2001::/32',
    '2001:db8::/32',
    'fc00::/7',
    'fe80::/10',
    'fec0::/10',
    'ff00::/8',
    '100::/64',
  ];
  assert.deepEqual(REFUSED_RANGES.map((r) => r.cidr).sort(), [...issue5].sort());
  for (const cidr of issue5)
    assert.ok(
      REFUSED.some(([, fragment]) => fragment === cidr),
      `no table row for ${cidr}`,
    );
});

test('the allow-list opens exactly the ranges it names', () => {
  const loop = ['127.0.0.1/32'];
  assert.deepEqual(isAddressAllowed('127.0.0.1', loop), { allowed: true });
  assert.equal(isAddressAllowed('127.0.0.2', loop).allowed, false);
  assert.equal(isAddressAllowed('::1', loop).allowed, false);
  // The IPv4-mapped form reaches the same host, so it follows its IPv4.
  assert.deepEqual(isAddressAllowed('::ffff:127.0.0.1', loop), { allowed: true });
  assert.equal(isAddressAllowed('::ffff:127.0.0.2', loop).allowed, false);
  // 6to4 and NAT64 forms go to a relay, not to the embedded host: an IPv4 entry does not open them.
  assert.equal(isAddressAllowed('2002:7f00:1::', loop).allowed, false);
  assert.equal(isAddressAllowed('64:ff9b::7f00:1', loop).allowed, false);
  assert.deepEqual(isAddressAllowed('::1', ['::1/128']), { allowed: true });
  assert.deepEqual(isAddressAllowed('10.9.8.7', ['10.0.0.0/8']), { allowed: true });
  assert.deepEqual(isAddressAllowed('fd00::5', [' fd00::/8 ']), { allowed: true });
  assert.deepEqual(isAddressAllowed('64:ff9b::7f00:1', ['64:ff9b::/96', '127.0.0.1/32']), { allowed: true });
  assert.deepEqual(isAddressAllowed('64:ff9b::5db8:d822', ['64:ff9b::/96']), { allowed: true });
});

test('an IPv6 entry never opens the IPv4 inside a mapped, compatible, NAT64 or 6to4 address', () => {
  const v6Entries = [['::ffff:0:0/96'], ['::ffff:169.254.169.254/128'], ['::/96'], ['::/0']];
  for (const entries of v6Entries) {
    for (const ip of [
      '::ffff:169.254.169.254',
      '::ffff:a9fe:a9fe',
      '::ffff:127.0.0.1',
      '::ffff:10.0.0.1',
      '::a9fe:a9fe',
    ]) {
      const verdict = isAddressAllowed(ip, entries);
      assert.equal(verdict.allowed, false, `${ip} with ${entries.join(',')}`);
      assert.match(verdict.allowed ? '' : verdict.reason, /the IPv4 inside/);
    }
    for (const url of [
      'http://[::ffff:a9fe:a9fe]/latest/meta-data',
      'http://[::ffff:127.0.0.1]/',
      'http://[::ffff:192.168.1.1]/',
    ]) {
      assert.equal(checkEndpointUrl(url, entries).ok, false, `${url} with ${entries.join(',')}`);
    }
  }
  // The IPv4 entry decides, so the mapped form of an opened IPv4 still passes.
  assert.deepEqual(isAddressAllowed('::ffff:169.254.169.254', ['::ffff:0:0/96', '169.254.169.254/32']), {
    allowed: true,
  });
  // NAT64 and 6to4 entries open the translator or relay, never a refused IPv4 behind it.
  for (const [ip, entry] of [
    ['64:ff9b::a9fe:a9fe', '64:ff9b::/96'],
    ['2002:a9fe:a9fe::1', '2002::/16'],
    ['2002:7f00:1::', '2002:7f00:1::/48'],
  ]) {
    const verdict = isAddressAllowed(ip as string, [entry as string]);
    assert.equal(verdict.allowed, false, ip);
    assert.match(verdict.allowed ? '' : verdict.reason, /IPv4 embedded in .*an IPv4 entry opens the IPv4 inside it/);
  }
  assert.equal(checkEndpointUrl('http://[64:ff9b::a9fe:a9fe]/', ['64:ff9b::/96']).ok, false);
  assert.deepEqual(isAddressAllowed('2002:a9fe:a9fe::1', ['2002::/16', '169.254.169.254/32']), { allowed: true });
});

test('an allow-list entry that is not a CIDR range is an error, never a silent refusal or opening', () => {
  assert.throws(() => isAddressAllowed('8.8.8.8', ['127.0.0.1']), RangeError);
  assert.throws(() => assertValidAllowlist(['127.0.0.1/32', 'loopback']), /"loopback" is not a CIDR range/);
  assert.doesNotThrow(() => assertValidAllowlist(['127.0.0.1/32', '::1/128']));
});

test('localhost names are recognised in every case and with trailing dots (RFC 6761)', () => {
  for (const name of ['localhost', 'LOCALHOST', 'localhost.', 'localhost..', 'a.localhost', 'A.B.LocalHost.'])
    assert.ok(isLocalhostName(name), name);
  for (const name of ['localhost.example.com', 'notlocalhost', 'example.com', 'localhos'])
    assert.ok(!isLocalhostName(name), name);
});

test('the WHATWG URL parser turns every IPv4 spelling into dotted decimal before the check', () => {
  const spellings: readonly [string, string][] = [
    ['http://2130706433/', '127.0.0.1'],
    ['http://0x7f000001/', '127.0.0.1'],
    ['http://017700000001/', '127.0.0.1'],
    ['http://0177.0.0.1/', '127.0.0.1'],
    ['http://0x7F.0.0.1/', '127.0.0.1'],
    ['http://127.1/', '127.0.0.1'],
    ['http://0x7f.1/', '127.0.0.1'],
    ['http://127.0.0.1./', '127.0.0.1'],
    ['http://127.0.0.01/', '127.0.0.1'],
    ['http://%31%32%37.0.0.1/', '127.0.0.1'],
    ['http://１２７.０.０.１/', '127.0.0.1'],
    ['http://2852039166/', '169.254.169.254'],
    ['http://[::FFFF:127.0.0.1]/', '[::ffff:7f00:1]'],
    ['http://[0:0:0:0:0:0:0:1]/', '[::1]'],
    ['http://LOCALHOST./', 'localhost.'],
  ];
  for (const [url, hostname] of spellings) assert.equal(new URL(url).hostname, hostname, url);
});

/** [url, expected: null = accepted, else a fragment of the reason]. */
const URLS: readonly (readonly [string, string | null])[] = [
  ['http://127.0.0.1/', '127.0.0.0/8'],
  ['http://2130706433/', '127.0.0.0/8'],
  ['http://0x7f000001/', '127.0.0.0/8'],
  ['http://0177.0.0.1/', '127.0.0.0/8'],
  ['http://127.1/', '127.0.0.0/8'],
  ['http://0x7f.1:8080/x', '127.0.0.0/8'],
  ['http://127.0.0.1./', '127.0.0.0/8'],
  ['HTTP://127.0.0.1/', '127.0.0.0/8'],
  ['http://%31%32%37.0.0.1/', '127.0.0.0/8'],
  ['http://１２７.０.０.１/', '127.0.0.0/8'],
  ['http://169.254.169.254/latest/meta-data/', '169.254.0.0/16'],
  ['http://2852039166/', '169.254.0.0/16'],
  ['http://10.0.0.1/', '10.0.0.0/8'],
  ['http://0/', '0.0.0.0/8'],
  ['http://[::1]/', '::1/128'],
  ['http://[0:0:0:0:0:0:0:1]:8080/', '::1/128'],
  ['http://[::]/', '::/128'],
  ['http://[::ffff:127.0.0.1]/', '127.0.0.0/8'],
  ['http://[::FFFF:7F00:1]/', '127.0.0.0/8'],
  ['http://[::127.0.0.1]/', '127.0.0.0/8'],
  ['http://[64:ff9b::7f00:1]/', '64:ff9b::/96'],
  ['http://[2002:7f00:1::]/', '2002::/16'],
  ['http://[fe80::1]/', 'fe80::/10'],
  ['http://[fd00::1]/', 'fc00::/7'],
  ['https://[ff02::1]/', 'ff00::/8'],
  ['http://localhost/', 'localhost name'],
  ['http://LOCALHOST/', 'localhost name'],
  ['http://localhost./', 'localhost name'],
  ['http://api.localhost:3000/hook', 'localhost name'],
  ['http://Api.LocalHost./', 'localhost name'],
  ['ftp://example.com/', 'scheme "ftp"'],
  ['file:///etc/passwd', 'scheme "file"'],
  ['gopher://example.com/', 'scheme "gopher"'],
  ['javascript:alert(1)', 'scheme "javascript"'],
  ['data:text/plain,hi', 'scheme "data"'],
  ['ws://example.com/', 'scheme "ws"'],
  ['not a url', 'whitespace'],
  ['not-a-url', 'not a valid absolute URL'],
  ['/relative/path', 'not a valid absolute URL'],
  ['http://', '"//" and a host'],
  // As typed vs as contacted: the parser would drop, turn or read these into something else.
  ['http:///path', '"//" and a host'],
  ['http:/host.example/', '"//" and a host'],
  ['https:host.example', '"//" and a host'],
  ['http://exa\tmple.com/', 'whitespace'],
  ['http://example.com/\r\n', 'whitespace'],
  ['\u0000http://example.com/', 'control'],
  ['http:\\\\example.com\\', 'backslash'],
  ['http://example.com:0/', 'port 0'],
  ['http://example.com:00/', 'port 0'],
  ['http://1.2.3.4.5/', 'not a valid absolute URL'],
  ['https://user:secret@example.com/', 'credentials'],
  ['https://user@example.com/', 'credentials'],
  ['https://example.com/webhook', null],
  ['http://example.com:8080/a?b=c', null],
  ['https://93.184.216.34/hook', null],
  ['https://[2606:4700::1]/hook', null],
  ['https://EXAMPLE.com./x', null],
  ['https://localhost.example.com/', null],
  ['https://[::ffff:93.184.216.34]/', null],
];

for (const [url, expected] of URLS) {
  test(`checkEndpointUrl ${expected === null ? 'accepts' : 'refuses'} ${url}`, () => {
    const verdict = checkEndpointUrl(url, []);
    if (expected === null) {
      assert.ok(verdict.ok, verdict.ok ? '' : verdict.reason);
    } else {
      assert.equal(verdict.ok, false);
      assert.ok(!verdict.ok && verdict.reason.includes(expected), !verdict.ok ? verdict.reason : '');
    }
  });
}

test('checkEndpointUrl returns the normalised URL and honours the allow-list', () => {
  const verdict = checkEndpointUrl('http://0x7f.1:8080/hook', ['127.0.0.1/32']);
  assert.ok(verdict.ok);
  assert.equal(verdict.ok && verdict.url.href, 'http://127.0.0.1:8080/hook');
  assert.equal(checkEndpointUrl('http://127.0.0.2/', ['127.0.0.1/32']).ok, false);
  // localhost stands for 127.0.0.1 and ::1: both must be open.
  assert.equal(checkEndpointUrl('http://localhost/', ['127.0.0.1/32']).ok, false);
  assert.equal(checkEndpointUrl('http://localhost/', ['127.0.0.1/32', '::1/128']).ok, true);
});
