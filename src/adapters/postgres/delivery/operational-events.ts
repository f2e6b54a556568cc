import { newId } from '../../../domain/ids.ts';
import type { Clock, Random } from '../../../ports/clock.ts';
import type { MessageStore } from '../../../ports/message-store.ts';
import type { OperationalEvents } from '../../../ports/operational-events.ts';
import { txClient } from '../tx.ts';

/**
 * The PostgreSQL {@link OperationalEvents}: each event becomes a message of the operational application
 * (`appRef` = its id or uid) with payload `{"type", "timestamp", "data"}` (the Svix operational-webhook
 * shape), fanned out to that application's endpoints in the caller's transaction.
 */
export function createPgOperationalEvents(appRef: string, messages: MessageStore, clock: Clock, random: Random): OperationalEvents {
  let cached: string | null = null;
  const applicationId: OperationalEvents['applicationId'] = async (tx) => {
    if (cached !== null) return cached;
    const res = await txClient(tx).query<{ id: string }>('SELECT id FROM applications WHERE id = $1 OR uid = $1 LIMIT 1', [appRef]);
    cached = res.rows[0]?.id ?? null;
    return cached;
  };
  return {
    applicationId,
    async emit(tx, events, at) {
      if (events.length === 0) return;
      const opsApp = await applicationId(tx);
      if (opsApp === null) return;
      for (const event of events) {
        if (event.appId === opsApp) continue; // never report on the operational application itself (no feedback loop)
        const payload = Buffer.from(JSON.stringify({ type: event.type, timestamp: at.toISOString(), data: event.data }));
        const id = newId('msg', clock.nowMs(), () => random.next());
        await messages.insert(tx, { id, appId: opsApp, eventId: null, eventType: event.type, channels: null, tags: null, payload, retentionHours: null }, clock.sqlNow());
      }
    },
  };
}
