import type { Handoff, HandoffOffer } from '../../ports/handoff.ts';
import type { WorkSink, WorkSource } from '../../ports/work-source.ts';

/**
 * Most endpoints one hand-off offer lists (the most recently answering first): the publish statement receives them as
 * an array parameter, so the list stays short; deliveries to the others are claimed.
 */
export const HANDOFF_MAX_ENDPOINTS = 64;

/**
 * The publish hand-off as a work source (docs/adr/0018-publish-hands-off-leases.md): the book of offers a dispatcher's
 * window makes to the publish statements of its process. The publish path sees it as a {@link Handoff}; the dispatcher
 * as a {@link WorkSource} that pushes leases ("these are yours already") and reserves the room of open offers.
 */
export interface HandoffSource extends Handoff, WorkSource {}

/**
 * Makes the hand-off source of one process. It offers room only while a dispatcher is connected (running) and its
 * window has room: per endpoint that answered it, the statement's messages, at most the share less what the endpoint
 * holds (in flight and in other open offers); in all, at most the free slots less the other open offers. The room of
 * an open offer is reserved until `adopt`, which gives it back and hands what the statement leased to the dispatcher
 * that made the offer — even if that dispatcher's stop began meanwhile (it then releases the leases).
 */
export function createHandoffSource(): HandoffSource {
  let sink: WorkSink | undefined;
  // Room of the offers whose statements have not ended: slots, and per endpoint.
  const reserved = { slots: 0, endpoints: new Map<string, number>() };
  // The dispatcher each open offer was made for: its leases go to that one.
  const madeFor = new WeakMap<HandoffOffer, WorkSink>();

  const offer = (messages: number): HandoffOffer | null => {
    const room = messages > 0 ? sink?.room() : undefined;
    if (room === undefined || room === null || room.free <= 0) return null;
    const endpointIds: string[] = [];
    const rooms: number[] = [];
    for (const id of room.answering(HANDOFF_MAX_ENDPOINTS)) {
      const n = Math.min(messages, room.share - room.held(id));
      if (n <= 0) continue;
      endpointIds.push(id);
      rooms.push(n);
    }
    if (endpointIds.length === 0) return null;
    const slots = Math.min(
      room.free,
      rooms.reduce((sum, n) => sum + n, 0),
    );
    reserved.slots += slots;
    for (const [i, id] of endpointIds.entries()) {
      reserved.endpoints.set(id, (reserved.endpoints.get(id) ?? 0) + rooms[i]!);
    }
    const { dispatcherId, leaseMs, nowMs } = room;
    const made: HandoffOffer = { dispatcherId, leaseMs, slots, endpointIds, room: rooms, leaseFromMs: nowMs };
    madeFor.set(made, sink!);
    return made;
  };

  const adopt = (made: HandoffOffer, deliveries: Parameters<Handoff['adopt']>[1]): void => {
    const to = madeFor.get(made);
    if (to === undefined) return; // not an open offer of this source (adopted already)
    madeFor.delete(made);
    reserved.slots -= made.slots;
    for (const [i, id] of made.endpointIds.entries()) {
      const left = (reserved.endpoints.get(id) ?? 0) - made.room[i]!;
      if (left > 0) reserved.endpoints.set(id, left);
      else reserved.endpoints.delete(id);
    }
    if (deliveries.length > 0) to.yours(deliveries, made.leaseFromMs + made.leaseMs);
  };

  return {
    name: 'handoff',
    offer,
    adopt,
    connect(s) {
      sink = s;
      return () => {
        if (sink === s) sink = undefined;
      };
    },
    reserved: () => reserved,
  };
}
