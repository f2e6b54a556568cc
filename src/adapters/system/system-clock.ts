import { randomInt } from 'node:crypto';
import type { Clock, Random } from '../../ports/clock.ts';

/** The production clock: wall time for timestamps and durations; SQL uses the database clock (`sqlNow()` is null). */
export const systemClock: Clock = { nowMs: () => Date.now(), sqlNow: () => null };

/** The production random source: node:crypto, uniform in [0, 1) with 47 bits. */
export const cryptoRandom: Random = { next: () => randomInt(0, 2 ** 47) / 2 ** 47 };
