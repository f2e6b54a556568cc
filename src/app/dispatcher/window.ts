import { settingDefault } from '../../config/config.ts';
import type { ClaimWindow } from '../../ports/delivery-store.ts';

/** Most endpoints whose last verdict (answering / unresponsive) a dispatcher remembers; older ones count as not yet attempted. */
const VERDICT_MEMORY = 1024;

/** Settings of {@link createWindowBook}; fractions of `concurrency` (docs/adr/0009-window-share-within-a-claim.md). */
export interface WindowSettings {
  readonly concurrency: number;
  readonly claimBatch: number;
  readonly endpointWindowShare?: number;
  readonly windowReserve?: number;
}

/** What one claim may take: its limit, the endpoints it skips, and the window it must keep (ClaimInput). */
export interface ClaimBounds {
  readonly limit: number;
  readonly excludeEndpoints: readonly string[];
  readonly window: ClaimWindow;
}

/** A dispatcher's book of its window: the last verdict per endpoint, and the bounds of the next claim. */
export interface WindowBook {
  /** Records whether an endpoint's finished attempt got a status line (`answered`). */
  note(endpointId: string, answered: boolean): void;
  /**
   * The bounds of a claim into `free` slots, given the endpoints of the attempts in flight (one entry per
   * attempt): at most the share per endpoint less what it holds; the endpoints not known to answer together
   * within the window less the reserve.
   */
  bounds(inFlightEndpoints: Iterable<string>, free: number): ClaimBounds;
}

/** Makes a {@link WindowBook} (ADR 0009). */
export function createWindowBook(settings: WindowSettings): WindowBook {
  // The last verdict on each endpoint this dispatcher attempted, most recent last (insertion order).
  const verdicts = new Map<string, 'answering' | 'unresponsive'>();
  const share = Math.max(1, Math.floor(settings.concurrency * (settings.endpointWindowShare ?? settingDefault('endpointWindowShare'))));
  const fraction = settings.windowReserve ?? settingDefault('windowReserve');
  const reserved = settings.concurrency >= 2 && fraction > 0 ? Math.max(1, Math.floor(settings.concurrency * fraction)) : 0;
  return {
    note(endpointId, answered) {
      verdicts.delete(endpointId);
      verdicts.set(endpointId, answered ? 'answering' : 'unresponsive');
      if (verdicts.size > VERDICT_MEMORY) verdicts.delete(verdicts.keys().next().value as string);
    },
    bounds(inFlightEndpoints, free) {
      const held = new Map<string, number>();
      for (const id of inFlightEndpoints) held.set(id, (held.get(id) ?? 0) + 1);
      const excludeEndpoints = [...held].filter(([, n]) => n >= share).map(([id]) => id);
      const limit = Math.min(free, settings.claimBatch);
      let heldUnproven = 0;
      for (const [id, n] of held) if (verdicts.get(id) !== 'answering') heldUnproven += n;
      const budget = Math.max(0, settings.concurrency - reserved - heldUnproven);
      // While the budget cannot bind, the verdicts change nothing: the claim is spared the two lists.
      const answering: string[] = [];
      const unresponsive: string[] = [];
      if (budget < limit) for (const [id, v] of verdicts) (v === 'answering' ? answering : unresponsive).push(id);
      return { limit, excludeEndpoints, window: { share, held, answering, unresponsive, budget: Math.min(budget, limit) } };
    },
  };
}
