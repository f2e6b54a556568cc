import { Agent } from 'undici';
import { createGuardedConnector, type LookupFunction } from './guarded-connect.ts';

/** What an agent of the sender is made with: the options of http-sender.ts that reach the connections. */
export interface AgentSettings {
  readonly connectTimeoutMs: number;
  readonly headersTimeoutMs: number;
  readonly bodyTimeoutMs: number;
  readonly maxSocketsPerOrigin: number;
  readonly egressAllowlist: readonly string[];
  readonly maxHeaderBytes: number;
  readonly lookup?: LookupFunction;
}

/** An endpoint's TLS client pool: the endpoint's pool key, and the certificate, key and CA of its agent. */
export interface TlsOf {
  readonly endpointKey: string;
  readonly options: { cert?: string; key?: string; ca?: string };
}

/** What an endpoint's pool last resolved and connected to (its latest new connection). */
export interface Seen {
  resolved: readonly string[] | null;
  connected: string | null;
}

export interface Pool {
  readonly agent: Agent;
  active: number;
  readonly seen: Seen;
}

/** The sender's connection pools, one per pool key (an endpoint). */
export interface SenderPools {
  /** The pool of `key`, counted active until the caller lowers `active` again; made when missing. */
  acquire(key: string, tls?: TlsOf): Pool;
  /** A new agent whose connections pass the SSRF guard and report what they resolved and connected to in `seen`. */
  agent(seen: Seen): Agent;
  /** Closes every pool (each once its requests in flight end). */
  close(): Promise<void>;
}

/** Most connection pools (endpoints) a sender keeps; past it, idle ones are closed (least recently used first). */
const MAX_POOLS = 4096;

/**
 * One agent per pool key (an endpoint), so a black-holed endpoint's connections never hold up another endpoint's
 * requests on the same origin (ADR 0009). Bounded: past MAX_POOLS, idle pools are closed, least recently used first.
 * An endpoint's TLS client pool is one per endpoint and receiver-auth version (key poolKey + NUL + version), the one
 * before closed when the version changes or the certificate is removed; at most `tlsPoolsMax` of them.
 */
export function createSenderPools(settings: AgentSettings, tlsPoolsMax: number): SenderPools {
  const makeAgent = (seen: Seen, tls?: TlsOf['options']): Agent =>
    new Agent({
      connect: createGuardedConnector({
        connectTimeoutMs: settings.connectTimeoutMs,
        egressAllowlist: settings.egressAllowlist,
        ...(settings.lookup === undefined ? {} : { lookup: settings.lookup }),
        ...(tls === undefined ? {} : { tls }),
        observer: {
          resolved: (a) => {
            seen.resolved = a;
            seen.connected = null;
          },
          connected: (a) => {
            seen.connected = a;
          },
        },
      }),
      connections: settings.maxSocketsPerOrigin,
      pipelining: 1,
      headersTimeout: settings.headersTimeoutMs,
      bodyTimeout: settings.bodyTimeoutMs,
      maxHeaderSize: settings.maxHeaderBytes,
    });
  const pools = new Map<string, Pool>();
  const tlsPoolOf = new Map<string, string>();
  const retire = (key: string): void => {
    const old = pools.get(key);
    pools.delete(key);
    if (old !== undefined) void old.agent.close(); // closes once its requests in flight end
  };
  const trim = (): void => {
    if (pools.size > MAX_POOLS) {
      for (const [k, p] of pools) {
        if (pools.size <= MAX_POOLS) break;
        if (p.active > 0) continue;
        pools.delete(k);
        void p.agent.close();
      }
    }
    for (const [ep, k] of tlsPoolOf) {
      if (tlsPoolOf.size <= tlsPoolsMax) break;
      if ((pools.get(k)?.active ?? 0) > 0) continue;
      tlsPoolOf.delete(ep);
      retire(k);
    }
  };
  const acquire = (key: string, tls?: TlsOf): Pool => {
    const endpointKey = tls === undefined ? key : tls.endpointKey;
    const previous = tlsPoolOf.get(endpointKey);
    if (previous !== undefined && previous !== key) {
      tlsPoolOf.delete(endpointKey);
      retire(previous);
    }
    if (tls !== undefined) {
      tlsPoolOf.delete(endpointKey);
      tlsPoolOf.set(endpointKey, key);
    }
    let pool = pools.get(key);
    if (pool !== undefined) pools.delete(key);
    else {
      const seen: Seen = { resolved: null, connected: null };
      pool = { agent: makeAgent(seen, tls?.options), active: 0, seen };
    }
    pools.set(key, pool);
    pool.active += 1;
    trim();
    return pool;
  };
  return {
    acquire,
    agent: (seen) => makeAgent(seen),
    async close() {
      const all = [...pools.values()];
      pools.clear();
      tlsPoolOf.clear();
      await Promise.all(all.map((p) => p.agent.close()));
    },
  };
}
