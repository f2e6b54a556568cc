import { settingDefault } from '../../config/config.ts';
import type { ClaimWindow } from '../../ports/delivery-store.ts';

/**
 * Most endpoints whose last verdict (answering / unresponsive) a dispatcher remembers; older ones count as not yet
 * attempted.
 */
const VERDICT_MEMORY = 1024;

/** Settings of {@link createWindowBook}; fractions of `concurrency` (docs/adr/0009-window-share-within-a-claim.md). */
export interface WindowSettings {
  readonly concurrency: number;
  readonly claimBatch: number;
  readonly endpointWindowShare?: number;
  readonly windowReserve?: number;
  /**
   * Deliveries claimed ahead of free slots (a count ≥ 0, default 0; in-flight.ts): a claim's share and
   * budget are taken over `concurrency + claimAheadCount`, and {@link WindowBook.mayStart} keeps the share and the
   * reserve over the requests actually open.
   */
  readonly claimAheadCount?: number;
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
  /**
   * Whether a delivery of `endpointId` claimed ahead may open its request now, given the open requests per
   * endpoint (`open`): the endpoint stays within its share of `concurrency`, and an endpoint not known to
   * answer within the window less the reserve, unless it has nothing open and is not known to be
   * unresponsive (its first attempt proves it, as in the claim).
   */
  mayStart(endpointId: string, open: ReadonlyMap<string, number>): boolean;
  /** Most deliveries one endpoint may hold, open or claimed ahead (the claims' share). */
  readonly share: number;
  /** Up to `max` endpoints whose last attempt got a status line, the most recently attempted first. */
  answering(max: number): string[];
}

/** Makes a {@link WindowBook} (ADR 0009). */
export function createWindowBook(settings: WindowSettings): WindowBook {
  // The last verdict on each endpoint this dispatcher attempted, most recent last (insertion order).
  const verdicts = new Map<string, 'answering' | 'unresponsive'>();
  const shareFraction = settings.endpointWindowShare ?? settingDefault('endpointWindowShare');
  const fraction = settings.windowReserve ?? settingDefault('windowReserve');
  const shareOf = (size: number): number => Math.max(1, Math.floor(size * shareFraction));
  const reservedOf = (size: number): number =>
    size >= 2 && fraction > 0 ? Math.max(1, Math.floor(size * fraction)) : 0;
  // Claims count open requests and deliveries claimed ahead together, over the window and what is claimed ahead.
  const size = settings.concurrency + (settings.claimAheadCount ?? 0);
  const share = shareOf(size);
  const reserved = reservedOf(size);
  // Opening a request counts open requests only, over the window.
  const openShare = shareOf(settings.concurrency);
  const openUnproven = settings.concurrency - reservedOf(settings.concurrency);
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
      const budget = Math.max(0, size - reserved - heldUnproven);
      // While the budget cannot bind, the verdicts change nothing: the claim is spared the two lists.
      const answering: string[] = [];
      const unresponsive: string[] = [];
      if (budget < limit) for (const [id, v] of verdicts) (v === 'answering' ? answering : unresponsive).push(id);
      return {
        limit,
        excludeEndpoints,
        window: { share, held, answering, unresponsive, budget: Math.min(budget, limit) },
      };
    },
    share,
    answering(max) {
      const found: string[] = [];
      const ids = [...verdicts.keys()];
      for (let i = ids.length - 1; i >= 0 && found.length < max; i -= 1)
        if (verdicts.get(ids[i]!) === 'answering') found.push(ids[i]!);
      return found;
    },
    mayStart(endpointId, open) {
      const mine = open.get(endpointId) ?? 0;
      if (mine >= openShare) return false;
      const verdict = verdicts.get(endpointId);
      if (verdict === 'answering') return true;
      if (mine === 0 && verdict === undefined) return true;
      let unproven = 0;
      for (const [id, n] of open) if (verdicts.get(id) !== 'answering') unproven += n;
      return unproven < openUnproven;
    },
  };
}
