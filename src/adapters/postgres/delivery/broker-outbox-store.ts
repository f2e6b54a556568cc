import type { Cipher } from '../../../ports/cipher.ts';
import type { BrokerOutboxStore, ClaimIdRefusal } from '../../../ports/broker-outbox-store.ts';
import type { ClaimedDelivery } from '../../../ports/delivery-store.ts';
import type { Db } from '../db.ts';
import { createClaimedReader, type ClaimRow } from '../claimed-row.ts';
import { CLAIM_IDS, STAMP_DUE, UNSTAMP } from './broker-outbox-sql.ts';
import { SWEEP } from './delivery-sql.ts';

/** Most expired leases settled by one sweep (as the claim's). */
const SWEEP_BATCH = 100;

type ClaimIdsRow = ClaimRow & { outcome: 'leased' | ClaimIdRefusal };

/** The PostgreSQL {@link BrokerOutboxStore}: the statements of broker-outbox-sql.ts and claim-ids.sql. */
export function createPgBrokerOutboxStore(db: Db, cipher: Cipher): BrokerOutboxStore {
  const toClaimed = createClaimedReader(cipher);
  return {
    async claimIds(input) {
      const ids = [...new Set(input.ids)];
      if (ids.length === 0) return { deliveries: [], reclaimed: 0, refused: new Map() };
      const w = input.window;
      const held = [...w.held];
      const rows = (
        await db.query<ClaimIdsRow>(CLAIM_IDS, [
          input.dispatcherId,
          ids,
          input.leaseMs,
          input.now,
          input.maxReclaims,
          input.excludeEndpoints,
          w.share,
          held.map(([id]) => id),
          held.map(([, n]) => n),
          w.answering,
          w.unresponsive,
          w.budget,
        ])
      ).rows;
      const deliveries: ClaimedDelivery[] = [];
      const refused = new Map<string, ClaimIdRefusal>(ids.map((id) => [id, 'not_due']));
      for (const row of rows) {
        const id = String(row.id);
        if (row.outcome === 'leased') {
          deliveries.push(toClaimed(row, input.dispatcherId));
          refused.delete(id);
        } else {
          refused.set(id, row.outcome);
        }
      }
      return { deliveries, reclaimed: deliveries.filter((d) => d.reclaimed).length, refused };
    },

    async stampDue(input) {
      const rows = (
        await db.query<{ id: string; endpoint_id: string; swept: boolean; stamp_us: string }>(STAMP_DUE, [
          input.limit,
          input.endpointAhead,
          input.sweepAfterMs,
          input.now,
          input.maxReclaims,
        ])
      ).rows;
      return {
        deliveries: rows.map((r) => ({ deliveryId: String(r.id), endpointId: r.endpoint_id, swept: r.swept })),
        stampedAt: rows[0]?.stamp_us ?? null,
      };
    },

    async unstamp(ids, stampedAt) {
      if (ids.length === 0) return;
      await db.query(UNSTAMP, [ids, stampedAt]);
    },

    async sweep(maxReclaims, now) {
      const swept = await db.query<{ state: string }>(SWEEP, [maxReclaims, now, SWEEP_BATCH]);
      return swept.rows.filter((r) => r.state === 'dead').length;
    },
  };
}
