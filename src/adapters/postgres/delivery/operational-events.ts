import { newId } from '../../../domain/ids.ts';
import type { Clock, Random } from '../../../ports/clock.ts';
import { StaleLookupError, type MessageStore } from '../../../ports/message-store.ts';
import type { OperationalEvent, OperationalEvents } from '../../../ports/operational-events.ts';
import type { Tx } from '../../../ports/unit-of-work.ts';
import { txClient } from '../tx.ts';

/** The savepoint that keeps a failed publish of operational events from failing the record around it. */
const SAVEPOINT = 'tidings_operational_events';

/** Options of {@link createPgOperationalEvents}. */
export interface OperationalEventsOptions {
  /**
   * Told when events were not published because their statement failed (their writes were rolled back to a
   * savepoint; the caller's transaction goes on). For a log line and a counter; never throws.
   */
  readonly onDropped?: (error: unknown, events: readonly OperationalEvent[]) => void;
}

/**
 * The PostgreSQL {@link OperationalEvents}: each event becomes a message of the operational application
 * (`appRef` = its id or uid) with payload `{"type", "timestamp", "data"}` (the Svix operational-webhook
 * shape), fanned out to that application's endpoints in the caller's transaction.
 *
 * An operational event never fails the caller's transaction (the record of a batch of outcomes):
 * - the application's id is cached, and each message is stored only if that id still names an application
 *   (the publish's confirmed lookup, `expected.appRef`), so a deleted application stores nothing instead of
 *   failing the foreign key; the id is then resolved again, and an application created again under the same
 *   uid gets the event;
 * - anything else that fails (the application deleted by a transaction that commits while the insert waits
 *   for it) rolls back to a savepoint taken before the first insert, and is told to `onDropped`.
 */
export function createPgOperationalEvents(
  appRef: string,
  messages: MessageStore,
  clock: Clock,
  random: Random,
  options: OperationalEventsOptions = {},
): OperationalEvents {
  let cached: string | null = null;
  const resolve = async (tx: Tx): Promise<string | null> => {
    const res = await txClient(tx).query<{ id: string }>(
      'SELECT id FROM applications WHERE id = $1 OR uid = $1 LIMIT 1',
      [appRef],
    );
    cached = res.rows[0]?.id ?? null;
    return cached;
  };
  const applicationId: OperationalEvents['applicationId'] = async (tx) => cached ?? resolve(tx);

  /** Stores one event as a message of `opsApp`; false when `opsApp` no longer names an application (nothing stored). */
  const store = async (tx: Tx, opsApp: string, event: OperationalEvent, at: Date): Promise<boolean> => {
    const payload = Buffer.from(JSON.stringify({ type: event.type, timestamp: at.toISOString(), data: event.data }));
    const id = newId('msg', clock.nowMs(), () => random.next());
    try {
      await messages.insert(
        tx,
        {
          id,
          appId: opsApp,
          eventId: null,
          eventType: event.type,
          channels: null,
          tags: null,
          payload,
          retentionHours: null,
          expected: { appRef: opsApp, eventTypeRevision: null },
        },
        clock.sqlNow(),
      );
      return true;
    } catch (error) {
      if (error instanceof StaleLookupError) return false;
      throw error;
    }
  };

  const publish = async (tx: Tx, opsApp: string, events: readonly OperationalEvent[], at: Date): Promise<void> => {
    let app: string | null = opsApp;
    for (const event of events) {
      // Never report on the operational application itself (no feedback loop).
      if (app === null || event.appId === app) continue;
      if (await store(tx, app, event, at)) continue;
      // The cached application is gone: resolve the reference again (deleted, or created again under its uid).
      app = await resolve(tx);
      if (app !== null && event.appId !== app) await store(tx, app, event, at);
    }
  };

  return {
    applicationId,
    async emit(tx, events, at) {
      if (events.length === 0) return;
      const opsApp = await applicationId(tx);
      if (opsApp === null) return;
      const client = txClient(tx);
      await client.query(`SAVEPOINT ${SAVEPOINT}`);
      try {
        await publish(tx, opsApp, events, at);
        await client.query(`RELEASE SAVEPOINT ${SAVEPOINT}`);
      } catch (error) {
        // Only a connection that cannot roll back to the savepoint fails the caller's transaction.
        await client.query(`ROLLBACK TO SAVEPOINT ${SAVEPOINT}`);
        cached = null;
        options.onDropped?.(error, events);
      }
    },
  };
}
