import { readFile, readlink, rm, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import lockfile from 'proper-lockfile';

/** How long a crashed holder's lock on the data folder stays, in ms (the lock is refreshed at half that). */
export const DATA_DIR_LOCK_STALE_MS = 10_000;
/** Wait between tries for a held data folder, in ms: two tries outlast a crashed holder's stale lock. */
const DATA_DIR_LOCK_RETRY_MS = 6_000;
/** Staleness of the short lock that serializes take-overs, in ms. */
const TAKEOVER_STALE_MS = 5_000;

/** Options of {@link lockDataDir}. */
export interface DataDirLockOptions {
  /**
   * Tries after the first while the folder is held by a live process (default 2, {@link DATA_DIR_LOCK_RETRY_MS} apart).
   */
  readonly retries?: number;
  /** Told when the lock was compromised (this process stalled longer than its staleness); the process keeps running. */
  readonly onCompromised?: (error: Error) => void;
}

/** The holder of a data folder, as written next to its lock. */
interface Owner {
  readonly pid: number;
  readonly host: string;
  /** The pid namespace (Linux `/proc/self/ns/pid`), null elsewhere: a pid is only judged within its namespace. */
  readonly pidNamespace: string | null;
}

/** This process's pid namespace on Linux (e.g. `pid:[4026531836]`), else null. */
async function pidNamespace(): Promise<string | null> {
  return readlink('/proc/self/ns/pid').catch(() => null);
}

/**
 * Locks the embedded engine's data folder for this process (proper-lockfile: an atomic `mkdir` of
 * `tidings.lock`, refreshed while held, stale after {@link DATA_DIR_LOCK_STALE_MS}) and writes the holder's
 * pid, host and pid namespace beside it (`tidings.owner`). A held lock whose owner is a process of this host
 * and pid namespace that no longer exists (a SIGKILL, a crash) is taken over at once, instead of after the staleness:
 * the dead owner is seen by `kill(pid, 0)` failing with ESRCH. Take-overs are serialized by a second, short lock, so
 * two processes starting together cannot both take over. An owner that is alive, of another host, or unknown (it died
 * before writing its pid) is waited for as before: the lock goes stale, then the retries take it.
 * @returns the function that releases the lock (and removes the owner file)
 * @throws the lock error (code `ELOCKED`) when the folder stays held by a live process
 */
export async function lockDataDir(dir: string, options: DataDirLockOptions = {}): Promise<() => Promise<void>> {
  const lockfilePath = join(dir, 'tidings.lock');
  const ownerPath = join(dir, 'tidings.owner');
  const lock = (retries: number) =>
    lockfile.lock(dir, {
      lockfilePath,
      stale: DATA_DIR_LOCK_STALE_MS,
      update: DATA_DIR_LOCK_STALE_MS / 2,
      retries: { retries, minTimeout: DATA_DIR_LOCK_RETRY_MS, factor: 1 },
      ...(options.onCompromised === undefined ? {} : { onCompromised: options.onCompromised }),
    });
  let release: () => Promise<void>;
  try {
    release = await lock(0);
  } catch (error) {
    const taken =
      (error as NodeJS.ErrnoException).code === 'ELOCKED'
        ? await takeOverFromDead(dir, lockfilePath, ownerPath, () => lock(0))
        : null;
    release = taken ?? (await lock(options.retries ?? 2));
  }
  await writeFile(
    ownerPath,
    JSON.stringify({ pid: process.pid, host: hostname(), pidNamespace: await pidNamespace() } satisfies Owner),
  );
  return async () => {
    await rm(ownerPath, { force: true });
    await release();
  };
}

/**
 * Takes the lock over when its owner is a dead process of this host; null when it is not (or another process is taking
 * over).
 */
async function takeOverFromDead(
  dir: string,
  lockfilePath: string,
  ownerPath: string,
  lock: () => Promise<() => Promise<void>>,
): Promise<(() => Promise<void>) | null> {
  let endTakeover: () => Promise<void>;
  try {
    // Its own key (proper-lockfile keeps one lock per locked path in a process): not `dir`, which the main lock uses.
    endTakeover = await lockfile.lock(join(dir, 'tidings.takeover'), {
      realpath: false,
      stale: TAKEOVER_STALE_MS,
      retries: 0,
    });
  } catch {
    return null; // another process is taking over right now: wait like for a live owner
  }
  try {
    // Read under the take-over lock: a process that took the lock over meanwhile has written its own pid.
    if (!(await ownerIsDead(ownerPath))) return null;
    await rm(lockfilePath, { recursive: true, force: true });
    await rm(ownerPath, { force: true });
    return await lock();
  } finally {
    await endTakeover().catch(() => undefined);
  }
}

async function ownerIsDead(ownerPath: string): Promise<boolean> {
  let owner: Owner;
  try {
    owner = JSON.parse(await readFile(ownerPath, 'utf8')) as Owner;
  } catch {
    return false; // unknown owner: wait for the lock to go stale
  }
  if (owner.host !== hostname() || !Number.isInteger(owner.pid) || owner.pid <= 0) return false;
  if (owner.pidNamespace !== (await pidNamespace())) return false; // another container's pid: not ours to judge
  if (owner.pid === process.pid) return false; // this process holds it (another open in the same process)
  try {
    process.kill(owner.pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}
