import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { test } from 'node:test';
import { pipelineGate, whenAnswered } from './pipeline-gate.ts';

/** A connection as the gate sees it: `destroyed`, `destroy()` and its `close` event. */
class FakeSocket extends EventEmitter {
  destroyed = false;
  destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    queueMicrotask(() => this.emit('close'));
  }
}

/** One pipelined request of `socket` and its response (which emits `close` once answered). */
function exchange(
  socket: FakeSocket,
  n: number,
): { req: IncomingMessage; res: ServerResponse & EventEmitter; n: number } {
  return {
    req: { socket } as unknown as IncomingMessage,
    res: new EventEmitter() as unknown as ServerResponse & EventEmitter,
    n,
  };
}

test(
  'a connection runs at most `depth` requests at once, the rest in order as answers finish, and is closed past ' +
    '`queue` waiting',
  () => {
    const ran: number[] = [];
    const pending = new Map<IncomingMessage, number>();
    const gate = pipelineGate((req) => ran.push(pending.get(req)!), { depth: 2, queue: 3 });
    const socket = new FakeSocket();
    const all = Array.from({ length: 5 }, (_, i) => exchange(socket, i));
    for (const e of all) {
      pending.set(e.req, e.n);
      gate.handler(e.req, e.res);
    }
    assert.deepEqual(ran, [0, 1], 'two run, three wait');
    all[0]!.res.emit('close');
    assert.deepEqual(ran, [0, 1, 2], 'an answer done lets the next one run');
    const sixth = exchange(socket, 5);
    pending.set(sixth.req, 5);
    gate.handler(sixth.req, sixth.res);
    assert.equal(socket.destroyed, false, 'three waiting: at the queue, not past it');
    const seventh = exchange(socket, 6);
    gate.handler(seventh.req, seventh.res);
    assert.equal(socket.destroyed, true, 'a fourth waiting closes the connection');
    assert.deepEqual(gate.stats(), { peakRunning: 2, peakWaiting: 3, closed: 1 });
    all[1]!.res.emit('close');
    assert.deepEqual(ran, [0, 1, 2], 'nothing more runs on a closed connection');
  },
);

test(
  'whenAnswered calls back once: on the response closing, on the connection closing, or at once for a connection ' +
    'already destroyed',
  async () => {
    const socket = new FakeSocket();
    const calls: string[] = [];
    const a = exchange(socket, 0);
    const b = exchange(socket, 1);
    whenAnswered(a.req, a.res, () => calls.push('a'));
    whenAnswered(b.req, b.res, () => calls.push('b'));
    a.res.emit('close');
    a.res.emit('close');
    assert.deepEqual(calls, ['a']);
    socket.destroy();
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(
      calls,
      ['a', 'b'],
      'a response queued behind an unread one is done with when its connection closes',
    );
    assert.equal(socket.listenerCount('close'), 0);
    // A request whose connection closed before its limits took their slot: the slot is given back.
    const late = exchange(socket, 2);
    whenAnswered(late.req, late.res, () => calls.push('late'));
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(calls, ['a', 'b', 'late']);
  },
);
