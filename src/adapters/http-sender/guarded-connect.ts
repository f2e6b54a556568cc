import type { LookupAddress, LookupOptions } from 'node:dns';
import { lookup as systemLookup } from 'node:dns';
import { isIP, type Socket } from 'node:net';
import { buildConnector } from 'undici';
import {
  assertValidAllowlist,
  isAddressAllowed,
  isLocalhostName,
  LOCALHOST_ADDRESSES,
} from '../../domain/egress-policy.ts';

/**
 * The SSRF guard in the connect path (docs/design.md#security). Every new connection of the delivery agent goes
 * through {@link createGuardedConnector}:
 *
 * 1. A literal IP host (Node's `net.connect` skips the lookup for those) is checked as it is.
 * 2. A name is resolved exactly once, by the guarded lookup that `net.connect` calls; if ANY resolved
 *    address is refused, the connection is refused. Otherwise `net.connect` receives exactly the checked
 *    addresses and connects to one of them, so a second answer from DNS (rebinding) is never used.
 *    `localhost` names are never sent to the resolver: they stand for 127.0.0.1 and ::1 (RFC 6761 §6.3).
 * 3. After the TCP (and TLS) handshake the peer address is checked once more, before any request byte is
 *    written; it only catches a future code path that would bypass steps 1–2.
 *
 * TLS keeps the URL's host name for SNI and certificate verification: only the address is pinned.
 */

/** A resolver with the shape of `dns.lookup(hostname, { all: true }, callback)`; injectable for tests. */
export type LookupFunction = (
  hostname: string,
  options: { readonly all: true },
  callback: (error: NodeJS.ErrnoException | null, addresses: readonly LookupAddress[]) => void,
) => void;

/** The egress policy refused the address (error kind `blocked_address`). */
export class BlockedAddressError extends Error {
  readonly code = 'TIDINGS_BLOCKED_ADDRESS';
  constructor(message: string) {
    super(message);
    this.name = 'BlockedAddressError';
  }
}

/**
 * A host name resolved to an address the egress policy refuses (error kind `dns` for the tenant, like a failed
 * lookup: a tenant must not learn which internal names exist; the operator's record keeps this reason).
 */
export class RefusedNameError extends Error {
  readonly code = 'TIDINGS_REFUSED_NAME';
  constructor(message: string) {
    super(message);
    this.name = 'RefusedNameError';
  }
}

/** The resolver failed or found nothing (error kind `dns`); `cause` is the resolver's error. */
export class DnsLookupError extends Error {
  readonly code = 'TIDINGS_DNS';
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'DnsLookupError';
  }
}

/** Options of {@link createGuardedConnector}. */
export interface GuardedConnectorOptions {
  /** Longest time for DNS lookup + TCP connect + TLS handshake, in ms (undici's connect timeout). */
  readonly connectTimeoutMs: number;
  /** CIDR ranges that open otherwise refused addresses (TIDINGS_EGRESS_ALLOWLIST). */
  readonly egressAllowlist: readonly string[];
  /** Resolver; default `dns.lookup` (the system resolver, as every other program on the host). */
  readonly lookup?: LookupFunction;
  /** Told what each new connection resolved and connected to (the operator's attempt record). */
  readonly observer?: ConnectObserver;
  /**
   * A TLS client certificate and key (PEM) for every TLS connection, and the CA bundle the server's certificate must
   * chain to instead of the system's roots (an endpoint's receiver auth, docs/adr/0028-receiver-authentication.md).
   */
  readonly tls?: { readonly cert?: string; readonly key?: string; readonly ca?: string };
}

/** Hooks of {@link GuardedConnectorOptions.observer}. */
export interface ConnectObserver {
  /** Every address a host resolved to (before the check), or the IP literal itself. */
  resolved(addresses: readonly string[]): void;
  /** The peer a connection was made to, as `ip:port` (`[ip]:port` for IPv6). */
  connected(address: string): void;
}

type NetLookupCallback = (
  error: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

const defaultLookup: LookupFunction = (hostname, options, callback) => {
  systemLookup(hostname, { all: options.all }, (error, addresses) => callback(error, addresses ?? []));
};

/**
 * Checks every address; returns the first refusal as an error, or null when all are allowed. A name the resolver
 * answered is refused as a {@link RefusedNameError}; a localhost name, which never reaches the resolver (and which
 * the tenant typed as such), as a {@link BlockedAddressError}.
 */
function refuseAny(
  hostname: string,
  addresses: readonly LookupAddress[],
  allowlist: readonly string[],
  resolved: boolean,
): Error | null {
  if (addresses.length === 0) return new DnsLookupError(`${hostname} resolved to no address`);
  const refusal = (message: string): Error =>
    resolved ? new RefusedNameError(message) : new BlockedAddressError(message);
  for (const { address } of addresses) {
    if (isIP(address) === 0) return refusal(`${hostname} resolved to "${address}", which is not an IP address`);
    const verdict = isAddressAllowed(address, allowlist);
    if (!verdict.allowed) return refusal(`${hostname} resolved to ${address}: ${verdict.reason}`);
  }
  return null;
}

/**
 * The `lookup` that `net.connect` calls for a host name: one resolver call, every answer checked, the
 * checked answers handed back unchanged (in the form `net.connect` asked for: all or one).
 */
function guardedLookup(resolve: LookupFunction, allowlist: readonly string[], observer?: ConnectObserver) {
  return (hostname: string, options: LookupOptions, callback: NetLookupCallback): void => {
    let answered = false;
    const answer = (error: NodeJS.ErrnoException | null, found: readonly LookupAddress[], resolved = true): void => {
      if (answered) return; // a resolver that calls back twice gets one hearing
      answered = true;
      if (error !== null) {
        callback(
          new DnsLookupError(`lookup of ${hostname} failed: ${error.code ?? error.message}`, { cause: error }),
          [],
        );
        return;
      }
      observer?.resolved(found.map((a) => a.address));
      const refused = refuseAny(hostname, found, allowlist, resolved);
      if (refused !== null) {
        callback(refused, []);
        return;
      }
      const wanted =
        options.family === 4 || options.family === 6 ? found.filter((a) => a.family === options.family) : found;
      const list = wanted.map(({ address, family }) => ({ address, family }));
      const first = list[0];
      if (first === undefined)
        callback(new DnsLookupError(`${hostname} has no IPv${String(options.family)} address`), []);
      else if (options.all === true) callback(null, list);
      else callback(null, first.address, first.family);
    };
    if (isLocalhostName(hostname)) {
      const fixed = LOCALHOST_ADDRESSES.map((address) => ({ address, family: isIP(address) }));
      process.nextTick(answer, null, fixed, false);
      return;
    }
    try {
      resolve(hostname, { all: true }, (error, addresses) => answer(error, addresses));
    } catch (error) {
      process.nextTick(answer, error as NodeJS.ErrnoException, []);
    }
  };
}

/**
 * Builds the undici connector of the delivery agent: undici's own connector (TCP or TLS, connect timeout,
 * keep-alive) with the guarded lookup, behind a check of literal IP hosts and of the connected peer.
 * A refused literal address or connected peer reaches undici as a {@link BlockedAddressError}, a name that resolved
 * to a refused address as a {@link RefusedNameError}, a resolver failure as a {@link DnsLookupError}.
 * @throws RangeError when an allow-list entry is not a CIDR range (checked once, here).
 */
export function createGuardedConnector(options: GuardedConnectorOptions): buildConnector.connector {
  const allowlist = Object.freeze([...options.egressAllowlist]);
  assertValidAllowlist(allowlist);
  const connectTcpOrTls = buildConnector({
    timeout: options.connectTimeoutMs,
    lookup: guardedLookup(options.lookup ?? defaultLookup, allowlist, options.observer),
    autoSelectFamily: true,
    ...(options.tls === undefined ? {} : options.tls),
  });
  return (connectOptions, callback) => {
    // undici passes IPv6 literals without brackets; names as the WHATWG parser left them.
    const host = connectOptions.hostname;
    if (isIP(host) !== 0) {
      options.observer?.resolved([host]);
      const verdict = isAddressAllowed(host, allowlist);
      if (!verdict.allowed) {
        process.nextTick(callback, new BlockedAddressError(verdict.reason), null);
        return;
      }
    }
    connectTcpOrTls(connectOptions, (error, socket) => {
      if (error !== null) {
        callback(error, null);
        return;
      }
      const peer = (socket as Socket).remoteAddress ?? '';
      options.observer?.connected(
        isIP(peer) === 6 ? `[${peer}]:${(socket as Socket).remotePort}` : `${peer}:${(socket as Socket).remotePort}`,
      );
      const verdict = isAddressAllowed(peer, allowlist);
      if (!verdict.allowed) {
        socket.destroy();
        callback(new BlockedAddressError(`connected peer ${peer}: ${verdict.reason}`), null);
        return;
      }
      callback(null, socket);
    });
  };
}
