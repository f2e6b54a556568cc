import { closeSync, existsSync, fsyncSync, openSync, readdirSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { NodeFS } from '@electric-sql/pglite/nodefs';

/**
 * Exit code of a process whose embedded database failed to flush to the disk (EX_IOERR, sysexits.h). The
 * process ends at once: PostgreSQL would otherwise PANIC inside this process's one thread and spin there, and
 * a server's answer to a failed `fsync` is the same (stop, then crash recovery at the next start; PostgreSQL
 * manual, `data_sync_retry`).
 */
export const FLUSH_FAILED_EXIT_CODE = 74;

/**
 * The parts of Emscripten's NODEFS that a flush needs: a stream (file or directory) holds its host descriptor in `nfd`.
 */
interface NodeFsStream {
  readonly nfd?: number;
  readonly node: unknown;
}
interface EmscriptenNodeFs {
  readonly stream_ops: { fsync?: (stream: NodeFsStream) => number };
  realPath(node: unknown): string;
}

/** Options of {@link openDurablePGlite}. */
export interface DurablePGliteOptions {
  /**
   * Called after each flush to the disk (tests count them); what it throws is ignored by a commit's flush, and fails
   * the open of a new data folder.
   */
  readonly onFlush?: () => void;
  /** Flushes one host descriptor (default `fsyncSync`); tests make it fail. */
  readonly flush?: (fd: number) => void;
}

/** Flushes `path` (a file or a folder) through `flush`. */
function flushPath(path: string, flush: (fd: number) => void): void {
  const fd = openSync(path, 'r');
  try {
    flush(fd);
  } finally {
    closeSync(fd);
  }
}

/** Flushes every file and folder under `root`, then `root` and its parent folder (a new data folder's entries). */
function flushTree(root: string, flush: (fd: number) => void): void {
  for (const entry of readdirSync(root, { withFileTypes: true, recursive: true })) {
    if (entry.isFile() || entry.isDirectory()) flushPath(join(entry.parentPath, entry.name), flush);
  }
  flushPath(root, flush);
  flushPath(dirname(root), flush);
}

/**
 * Ends the process after a failed flush: one line on stderr, then exit {@link FLUSH_FAILED_EXIT_CODE}, from
 * inside PostgreSQL's call (nothing after a failed flush may be acknowledged).
 */
function flushFailed(path: string, error: unknown): never {
  writeSync(
    2,
    `tidings: the embedded database could not flush ${path} to the disk ` +
      `(${error instanceof Error ? error.message : String(error)}); stopping. The next start recovers from the ` +
      `write-ahead log.\n`,
  );
  process.exit(FLUSH_FAILED_EXIT_CODE);
}

/**
 * PGlite's Node file system with an `fsync` that reaches the disk. Emscripten's NODEFS, under PGlite 0.5, has no
 * `fsync` of its own (a call returns without flushing), and its `fdatasync` is a no-op that cannot be
 * replaced; this one flushes the host file or folder behind the stream.
 */
class DurableNodeFS extends NodeFS {
  readonly #options: DurablePGliteOptions;

  constructor(dataDir: string, options: DurablePGliteOptions) {
    super(dataDir);
    this.#options = options;
  }

  override async init(pg: PGlite, opts: Parameters<NodeFS['init']>[1]): ReturnType<NodeFS['init']> {
    const { emscriptenOpts } = await super.init(pg, opts);
    const { onFlush, flush = fsyncSync } = this.#options;
    const flushing = (mod: { FS: { filesystems: { NODEFS: EmscriptenNodeFs } } }): void => {
      const nodefs = mod.FS.filesystems.NODEFS;
      nodefs.stream_ops.fsync = (stream) => {
        try {
          // NODEFS opens files and folders alike on Linux; the path is a fallback for a stream without one.
          if (stream.nfd !== undefined) flush(stream.nfd);
          else flushPath(nodefs.realPath(stream.node), flush);
        } catch (error) {
          flushFailed(nodefs.realPath(stream.node), error);
        }
        try {
          onFlush?.();
        } catch {
          // A counter of the tests; a flush that happened stays a success.
        }
        return 0;
      };
    };
    const preRun = [emscriptenOpts.preRun ?? []].flat() as ((mod: never) => void)[];
    return { emscriptenOpts: { ...emscriptenOpts, preRun: [...preRun, flushing] as never } };
  }
}

/**
 * PostgreSQL's start parameters for the embedded engine: PGlite's defaults without `-F` (fsync off), and
 * `wal_sync_method = fsync`, so that a commit flushes the WAL through `fsync` (which {@link DurableNodeFS}
 * makes real) rather than `fdatasync` (which does nothing under PGlite).
 */
export const DURABLE_START_PARAMS: readonly string[] = Object.freeze([
  ...PGlite.defaultStartParams.filter((p) => p !== '-F'),
  '-c',
  'fsync=on',
  '-c',
  'wal_sync_method=fsync',
]);

/**
 * Opens PGlite persisted in `dir` with every commit flushed to the disk before it returns, as PostgreSQL does
 * on a server with `fsync = on` and `synchronous_commit = on` (docs/adr/0001-runtime-and-embedded-engine.md):
 * what the API answered 2xx for survives a power loss or a kernel crash on Linux, not only the death of the
 * process. A new data folder (written by PGlite's initdb without a flush) is flushed whole before this returns.
 * Each flush is a synchronous `fsync` on the process's main thread; a failed one ends the process with
 * {@link FLUSH_FAILED_EXIT_CODE}.
 * @throws what `PGlite.create` throws
 */
export async function openDurablePGlite(dir: string, options: DurablePGliteOptions = {}): Promise<PGlite> {
  const created = !existsSync(join(dir, 'PG_VERSION'));
  const lite = await PGlite.create({ fs: new DurableNodeFS(dir, options), startParams: [...DURABLE_START_PARAMS] });
  if (created) {
    try {
      const flush = options.flush ?? fsyncSync;
      flushTree(dir, (fd) => {
        flush(fd);
        options.onFlush?.();
      });
    } catch (error) {
      await lite.close().catch(() => undefined);
      throw new Error(`the new embedded data folder ${dir} could not be flushed to the disk`, { cause: error });
    }
  }
  return lite;
}
