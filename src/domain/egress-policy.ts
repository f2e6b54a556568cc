import ipaddr from 'ipaddr.js';

/**
 * The egress policy (docs/design.md#security): which addresses and URLs outbound webhook requests may reach.
 * Pure range logic over ipaddr.js; the HTTP sender applies it to every resolved address in its connect
 * path, and endpoint creation applies {@link checkEndpointUrl} to the URL a user typed.
 */

type Address = ipaddr.IPv4 | ipaddr.IPv6;

/** One refused range: CIDR, a short name used in refusal reasons, and the rule's source. */
export interface RefusedRange {
  readonly cidr: string;
  readonly name: string;
  readonly source: string;
}

const range = (cidr: string, name: string, source: string): RefusedRange => Object.freeze({ cidr, name, source });

/**
 * Every refused range (docs/design.md#security, from the IANA IPv4/IPv6 special-purpose address registries). An address
 * in one of them is refused unless the allow-list contains it. IPv4-mapped (::ffff:0:0/96) and
 * IPv4-compatible (::/96) IPv6 addresses are not listed: they are unwrapped and their IPv4 is checked.
 */
export const REFUSED_RANGES: readonly RefusedRange[] = Object.freeze([
  range('0.0.0.0/8', 'this network', 'RFC 791'),
  range('10.0.0.0/8', 'private', 'RFC 1918'),
  range('100.64.0.0/10', 'carrier-grade NAT', 'RFC 6598'),
  range('127.0.0.0/8', 'loopback', 'RFC 1122'),
  range('169.254.0.0/16', 'link-local', 'RFC 3927'),
  range('172.16.0.0/12', 'private', 'RFC 1918'),
  range('192.0.0.0/24', 'IETF protocol assignments', 'RFC 6890'),
  range('192.0.2.0/24', 'documentation (TEST-NET-1)', 'RFC 5737'),
  range('192.88.99.0/24', '6to4 relay anycast', 'RFC 7526'),
  range('192.168.0.0/16', 'private', 'RFC 1918'),
  range('198.18.0.0/15', 'benchmarking', 'RFC 2544'),
  range('198.51.100.0/24', 'documentation (TEST-NET-2)', 'RFC 5737'),
  range('203.0.113.0/24', 'documentation (TEST-NET-3)', 'RFC 5737'),
  range('224.0.0.0/4', 'multicast', 'RFC 5771'),
  range('240.0.0.0/4', 'reserved', 'RFC 1112'),
  range('255.255.255.255/32', 'limited broadcast', 'RFC 919'),
  range('::/128', 'unspecified', 'RFC 4291'),
  range('::1/128', 'loopback', 'RFC 4291'),
  range('64:ff9b::/96', 'NAT64', 'RFC 6052'),
  range('64:ff9b:1::/48', 'local-use NAT64', 'RFC 8215'),
  range('100::/64', 'discard-only', 'RFC 6666'),
  range('2001::/32', 'Teredo', 'RFC 4380'),
  range('2001:db8::/32', 'documentation', 'RFC 3849'),
  range('2002::/16', '6to4', 'RFC 3056'),
  range('fc00::/7', 'unique local', 'RFC 4193'),
  range('fe80::/10', 'link-local', 'RFC 4291'),
  range('fec0::/10', 'site-local', 'RFC 3879'),
  range('ff00::/8', 'multicast', 'RFC 4291'),
]);

/** Parsed ranges, longest prefix first, so a reason names the most specific range (255.255.255.255/32, not 240/4). */
const PARSED_REFUSED: readonly (readonly [RefusedRange, Address, number])[] = REFUSED_RANGES.map((r) => {
  const [network, bits] = ipaddr.parseCIDR(r.cidr);
  return [r, network, bits] as const;
}).sort((a, b) => b[2] - a[2]);

/** IPv6 global unicast (RFC 4291 §2.4, IANA): every routable IPv6 address lies in 2000::/3 today. */
const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3');

/**
 * The addresses a `localhost` name stands for (RFC 6761 §6.3: `localhost` and every name under it are
 * loopback and are never sent to DNS).
 */
export const LOCALHOST_ADDRESSES: readonly string[] = Object.freeze(['127.0.0.1', '::1']);

/** The verdict on one address or URL; `reason` is a sentence for the attempt detail or the 422 detail. */
export type AddressVerdict = { readonly allowed: true } | { readonly allowed: false; readonly reason: string };

/**
 * True when `name` is `localhost` or a name under it (`api.localhost`), in any case and with or without
 * trailing dots (`LOCALHOST.`). RFC 6761 §6.3.
 */
export function isLocalhostName(name: string): boolean {
  const bare = name.toLowerCase().replace(/\.+$/, '');
  return bare === 'localhost' || bare.endsWith('.localhost');
}

/** Parses every allow-list entry; throws RangeError naming the first that is not a CIDR range. */
function parseAllowlist(allowlist: readonly string[]): readonly [Address, number][] {
  return allowlist.map((entry) => {
    try {
      return ipaddr.parseCIDR(entry.trim());
    } catch (error) {
      throw new RangeError(`egress allow-list entry "${entry}" is not a CIDR range (e.g. 127.0.0.1/32)`, {
        cause: error,
      });
    }
  });
}

/**
 * Checks that every entry of an allow-list is a CIDR range (`127.0.0.1/32`, `::1/128`).
 * @throws RangeError naming the first invalid entry.
 */
export function assertValidAllowlist(allowlist: readonly string[]): void {
  parseAllowlist(allowlist);
}

function inAllowlist(address: Address, allowlist: readonly [Address, number][]): boolean {
  return allowlist.some(([network, bits]) => network.kind() === address.kind() && address.match(network, bits));
}

/**
 * The IPv4 address an IPv6 address stands for, when it is IPv4-mapped (::ffff:a.b.c.d, RFC 4291 §2.5.5.2)
 * or IPv4-compatible (::a.b.c.d, deprecated by RFC 4291 §2.5.5.1; :: and ::1 excluded, they have ranges of
 * their own). Such an address reaches the IPv4 host, so the IPv4 is what gets checked.
 */
function unwrapIPv4(address: ipaddr.IPv6): ipaddr.IPv4 | null {
  const p = address.parts;
  const high = p.slice(0, 5).every((part) => part === 0);
  if (!high) return null;
  const tail = ((p[6] ?? 0) << 16) | (p[7] ?? 0);
  if (p[5] === 0xffff || (p[5] === 0 && tail >>> 0 > 1)) {
    return new ipaddr.IPv4([(p[6] ?? 0) >> 8, (p[6] ?? 0) & 0xff, (p[7] ?? 0) >> 8, (p[7] ?? 0) & 0xff]);
  }
  return null;
}

/** The IPv4 embedded in a 6to4 (2002:aabb:ccdd::/48, RFC 3056) or NAT64 (64:ff9b::/96, RFC 6052) address. */
function embeddedIPv4(address: ipaddr.IPv6): ipaddr.IPv4 | null {
  const p = address.parts.map((part) => part ?? 0);
  const octets = (hi: number, lo: number) => [hi >> 8, hi & 0xff, lo >> 8, lo & 0xff];
  if (p[0] === 0x2002) return new ipaddr.IPv4(octets(p[1] ?? 0, p[2] ?? 0));
  if (p[0] === 0x64 && p[1] === 0xff9b && p.slice(2, 6).every((part) => part === 0))
    return new ipaddr.IPv4(octets(p[6] ?? 0, p[7] ?? 0));
  return null;
}

/** Parses an address string: dotted IPv4, IPv6 (zone id allowed), or the other IPv4 forms inet_aton takes. */
function parseAddress(ip: string): Address | null {
  const text = ip.trim();
  if (ipaddr.IPv4.isValidFourPartDecimal(text)) return ipaddr.IPv4.parse(text);
  if (ipaddr.IPv6.isValid(text)) return ipaddr.IPv6.parse(text);
  // Decimal, octal, hex and short IPv4 forms ("2130706433", "0x7f.1"): what a resolver library would
  // connect to, so they are checked as that address rather than waved through as "not an IP".
  if (ipaddr.IPv4.isValid(text)) return ipaddr.IPv4.parse(text);
  return null;
}

function refusedRangeOf(address: Address): RefusedRange | null {
  for (const [r, network, bits] of PARSED_REFUSED) {
    if (network.kind() === address.kind() && address.match(network, bits)) return r;
  }
  return null;
}

/**
 * Decides whether an outbound request may connect to `ip` (docs/design.md#security).
 *
 * Refused: every range of {@link REFUSED_RANGES}, and any IPv6 address outside global unicast 2000::/3.
 * IPv4-mapped and IPv4-compatible IPv6 addresses are unwrapped before the allow-list is read, and their IPv4
 * alone decides: the mapped form of an allow-listed IPv4 is allowed, and no IPv6 entry opens a mapped address
 * (`::ffff:0:0/96` would otherwise open 169.254.169.254). NAT64 and 6to4 addresses are refused as ranges, the
 * embedded IPv4 named in the reason; an IPv6 entry for the address opens it only when the embedded IPv4 is
 * allowed too (public, or opened by an IPv4 entry): an IPv4 entry alone does not open them, since the packets
 * go to a translator or relay.
 *
 * @param ip an IP address as a resolver returns it (dotted IPv4 or IPv6, optionally with a zone id); other
 *   IPv4 spellings are interpreted as inet_aton would. Anything else is refused.
 * @param allowlist CIDR ranges (TIDINGS_EGRESS_ALLOWLIST) that open otherwise refused addresses.
 * @throws RangeError when an allow-list entry is not a CIDR range (the configuration validates it first).
 */
export function isAddressAllowed(ip: string, allowlist: readonly string[]): AddressVerdict {
  const allowed = parseAllowlist(allowlist);
  const address = parseAddress(ip);
  if (address === null) return { allowed: false, reason: `"${ip}" is not an IP address` };
  if (address.kind() === 'ipv4') return judgeAddress(address, allowed, '');
  const v6 = address as ipaddr.IPv6;
  const mapped = unwrapIPv4(v6);
  if (mapped !== null) return judgeAddress(mapped, allowed, ` (the IPv4 inside ${ip})`);
  const embedded = embeddedIPv4(v6);
  if (embedded !== null && inAllowlist(v6, allowed)) {
    const inner = judgeAddress(embedded, allowed, ` (the IPv4 embedded in ${ip})`);
    if (inner.allowed) return inner;
    return {
      allowed: false,
      reason:
        `${inner.reason}; an IPv6 allow-list entry opens a NAT64 or 6to4 address only when an IPv4 entry opens ` +
        'the IPv4 inside it',
    };
  }
  return judgeAddress(v6, allowed, '');
}

/** One address against the allow-list, then the refused ranges and (IPv6) global unicast. */
function judgeAddress(address: Address, allowed: readonly [Address, number][], via: string): AddressVerdict {
  if (inAllowlist(address, allowed)) return { allowed: true };
  const refused = refusedRangeOf(address);
  if (refused !== null) {
    const embedded = address.kind() === 'ipv6' ? embeddedIPv4(address as ipaddr.IPv6) : null;
    const inside = embedded === null ? '' : `, embedding ${embedded.toString()}`;
    return {
      allowed: false,
      reason:
        `${address.toString()}${via} is in a refused range: ${refused.name} ${refused.cidr} ` +
        `(${refused.source})${inside}`,
    };
  }
  if (address.kind() === 'ipv6' && !address.match(GLOBAL_UNICAST_V6)) {
    return { allowed: false, reason: `${address.toString()} is outside IPv6 global unicast 2000::/3 (RFC 4291)` };
  }
  return { allowed: true };
}

/**
 * The verdict on an endpoint URL; `url` is the parsed (WHATWG-normalised) URL when it is accepted. A refusal
 * that the allow-list could lift names it in `setting`.
 */
export type UrlVerdict =
  | { readonly ok: true; readonly url: URL }
  | { readonly ok: false; readonly reason: string; readonly setting?: 'TIDINGS_EGRESS_ALLOWLIST' };

/**
 * Checks a host as the WHATWG URL parser left it (`url.hostname`): a literal IP address (IPv6 in brackets)
 * is checked with {@link isAddressAllowed}; a `localhost` name stands for {@link LOCALHOST_ADDRESSES} and is
 * refused unless the allow-list opens all of them. Any other name passes: what it resolves to is checked at
 * delivery time.
 */
export function checkUrlHost(hostname: string, allowlist: readonly string[]): AddressVerdict {
  const host = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  if (ipaddr.IPv4.isValidFourPartDecimal(host) || ipaddr.IPv6.isValid(host)) return isAddressAllowed(host, allowlist);
  if (isLocalhostName(host)) {
    for (const ip of LOCALHOST_ADDRESSES) {
      const verdict = isAddressAllowed(ip, allowlist);
      if (!verdict.allowed)
        return { allowed: false, reason: `"${hostname}" is a localhost name (RFC 6761): ${verdict.reason}` };
    }
  }
  return { allowed: true };
}

/**
 * C0 controls, space and DEL: the WHATWG parser strips or drops them silently (URL Standard §4.4, basic URL parser).
 */
const URL_WHITESPACE_OR_CONTROL = /[\u0000-\u0020\u007f]/;

/**
 * The URL's characters as typed, before parsing: null when the parser will contact what was typed, or the
 * reason it would not (see {@link checkEndpointUrl}).
 */
export function checkUrlForm(url: string): string | null {
  if (URL_WHITESPACE_OR_CONTROL.test(url))
    return (
      'the URL contains whitespace or a control character (tab, CR and LF would be dropped silently); ' +
      'percent-encode them'
    );
  if (url.includes('\\')) return 'the URL contains a backslash, which would be read as "/"; percent-encode it (%5C)';
  if (/^https?:/i.test(url) && !/^https?:\/\/[^/?#]/i.test(url))
    return (
      'after "http:" or "https:" the URL must have "//" and a host (e.g. http:///path would contact the host ' +
      '"path")'
    );
  return null;
}

/**
 * Checks an endpoint URL when it is created or changed (docs/design.md#security: a refused literal address or name →
 * 422 `url_not_allowed`). Parsed with the WHATWG URL parser, which already turns every IPv4 spelling (decimal
 * `2130706433`, octal `0177.0.0.1`, hex `0x7f.1`, short `127.1`, trailing dot, percent-encoded, full-width
 * digits) into dotted decimal and lower-cases names, so checking `url.hostname` covers them all.
 *
 * Refused: unparsable URLs; schemes other than http and https; credentials in the URL (`user:pass@`:
 * they would be stored and listed with the URL, and the sender never sends them; receivers that need a
 * secret get it through endpoint headers); a literal address or localhost name refused by
 * {@link checkUrlHost}. Names are not resolved here; DNS can change, so the delivery-time guard decides.
 * Also refused, because the parser would silently contact something other than what was typed
 * ({@link checkUrlForm}): whitespace or control characters (the parser drops tab, CR and LF), a backslash
 * (read as `/`), a scheme not followed by `//` and a host (`http:///path` contacts the host `path`), port 0.
 * The caller stores `url.href`: the URL as it will be contacted.
 *
 * @param allowlist CIDR ranges (TIDINGS_EGRESS_ALLOWLIST).
 * @throws RangeError when an allow-list entry is not a CIDR range.
 */
export function checkEndpointUrl(url: string, allowlist: readonly string[]): UrlVerdict {
  const form = checkUrlForm(url);
  if (form !== null) return { ok: false, reason: form };
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { ok: false, reason: 'not a valid absolute URL' };
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    return { ok: false, reason: `scheme "${parsed.protocol.slice(0, -1)}" is not allowed; use http or https` };
  }
  if (parsed.username !== '' || parsed.password !== '') {
    return { ok: false, reason: 'credentials in the URL are not accepted; send them as endpoint headers' };
  }
  if (parsed.hostname === '') return { ok: false, reason: 'the URL has no host' };
  if (parsed.port === '0') return { ok: false, reason: 'port 0 cannot be connected to' };
  const verdict = checkUrlHost(parsed.hostname, allowlist);
  if (!verdict.allowed) return { ok: false, reason: verdict.reason, setting: 'TIDINGS_EGRESS_ALLOWLIST' };
  return { ok: true, url: parsed };
}
