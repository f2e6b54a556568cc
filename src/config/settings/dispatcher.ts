import { z } from 'zod';
import { int, durationMs, type SettingTable } from '../parse.ts';

/** How a dispatcher leases and runs deliveries, and how it stops. */
export const DISPATCHER_SETTINGS = {
  dispatcherId: {
    env: 'TIDINGS_DISPATCHER_ID',
    schema: z.string().min(1).optional(),
    defaultValue: undefined,
    unit: 'text',
    description: 'Dispatcher id written into leases and the timeline. Unset: host-pid-random.',
  },
  leaseMs: {
    env: 'TIDINGS_LEASE',
    schema: durationMs(100),
    defaultValue: '60s',
    unit: 'duration',
    description:
      'Lease on a claimed delivery; renewed about every third of it while the request is in flight. Must be at ' +
      'least the attempt deadline plus 1 s.',
  },
  concurrency: {
    env: 'TIDINGS_CONCURRENCY',
    schema: int(1, 100_000),
    defaultValue: '1024',
    unit: 'requests',
    description:
      'Requests in flight per dispatcher; claims fill free slots, plus TIDINGS_CLAIM_AHEAD. Sized for slow ' +
      'receivers: at 100 ms per answer, one endpoint (half the window) is bounded at ~5,000 deliveries/s.',
  },
  endpointWindowShare: {
    env: 'TIDINGS_ENDPOINT_WINDOW_SHARE',
    schema: z.coerce.number().gt(0).max(1),
    defaultValue: '0.5',
    unit: 'fraction',
    description:
      "Most of a dispatcher's in-flight window one endpoint may hold, so a slow or black-holed endpoint cannot " +
      'take every slot.',
  },
  windowReserve: {
    env: 'TIDINGS_WINDOW_RESERVE',
    schema: z.coerce.number().min(0).lt(1),
    defaultValue: '0.25',
    unit: 'fraction',
    description:
      "Part of a dispatcher's in-flight window kept for endpoints that are answering: endpoints whose last " +
      'attempt got no answer, or not yet attempted, together hold at most the rest (at least one slot is kept ' +
      'when the window is 2 or more). ADR 0009.',
  },
  claimAhead: {
    env: 'TIDINGS_CLAIM_AHEAD',
    schema: z.coerce.number().min(0).max(1),
    defaultValue: '0.2',
    unit: 'fraction',
    description:
      'Deliveries a dispatcher claims ahead of free slots, as a fraction of TIDINGS_CONCURRENCY (rounded up, ' +
      'at most TIDINGS_CLAIM_BATCH): each waits for a slot and takes it the moment an answer frees it, without ' +
      'waiting for a claim. 0 claims into free slots only. ADR 0016, decision 16.',
  },
  publishHandoff: {
    env: 'TIDINGS_PUBLISH_HANDOFF',
    schema: z.enum(['true', 'false']).transform((v) => v === 'true'),
    defaultValue: 'true',
    unit: 'boolean',
    description:
      'With the API and the dispatcher in one process (serve, the embedded engine): a publish inserts its ' +
      'deliveries to endpoints that answer this dispatcher already leased to it, within its free window, and ' +
      'they are sent without a claim. false: every delivery is claimed. ADR 0018.',
  },
  claimBatch: {
    env: 'TIDINGS_CLAIM_BATCH',
    schema: int(1, 10_000),
    defaultValue: '100',
    unit: 'rows',
    description: 'Most deliveries claimed by one statement.',
  },
  pollIntervalMs: {
    env: 'TIDINGS_POLL_INTERVAL',
    schema: durationMs(1),
    defaultValue: '1s',
    unit: 'duration',
    description: 'Idle poll period (NOTIFY wakes dispatchers sooner).',
  },
  maxReclaims: {
    env: 'TIDINGS_MAX_RECLAIMS',
    schema: int(1, 1000),
    defaultValue: '5',
    unit: 'claims',
    description: 'Reclaims without a recorded outcome before dead-lettering (lease_lost_repeatedly).',
  },
  shutdownGraceMs: {
    env: 'TIDINGS_SHUTDOWN_GRACE',
    schema: durationMs(0),
    defaultValue: '20s',
    unit: 'duration',
    description: 'On SIGTERM/SIGINT: time to finish in-flight attempts before their leases are released.',
  },
  shutdownTimeoutMs: {
    env: 'TIDINGS_SHUTDOWN_TIMEOUT',
    schema: durationMs(1),
    defaultValue: '30s',
    unit: 'duration',
    description:
      'On SIGTERM/SIGINT: time past the grace for the rest of the stop (releasing leases, closing ' +
      'connections); then the process exits with code 1, and leases not released expire.',
  },
} satisfies SettingTable;
