import { rename, link, rm, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { RandomIds } from '../crypto/random.ts';
import { asStorageError, isErrno, StorageFull, StorageReadOnly } from '../storage/errors.ts';
import { byFd, fsyncDir, mkdirp, readTextIfThere, writeAll } from '../storage/fs.ts';

/**
 * Durable file primitives. Every write goes to a temp file in one scratch folder,
 * is fsynced, then moved into place with rename (replace) or link (create-exclusive),
 * and the destination folder is fsynced so the new name survives a power cut.
 * A crash at any instant leaves either the old file or the new one, never a torn one.
 */
export class DurableFiles {
  readonly #tmpDir: string;
  readonly #knownDirs = new Set<string>();
  #making: Promise<void> = Promise.resolve();
  #tmpCounter = 0;
  readonly #ids = new RandomIds();

  readonly #refused: (err: StorageFull | StorageReadOnly) => void;
  readonly #synced: (what: 'file' | 'folder', seconds: number) => void;
  /** Durable writes (replaces and creates) done since start (README, Metrics). */
  #writes = 0;

  constructor(
    tmpDir: string,
    hooks: {
      /** Told when a write is refused for space or permission (the server throttles what it logs). */
      refused?: (err: StorageFull | StorageReadOnly) => void;
      /** Told how long each fsync took (README, Metrics). */
      synced?: (what: 'file' | 'folder', seconds: number) => void;
    } = {},
  ) {
    this.#tmpDir = tmpDir;
    this.#refused = hooks.refused ?? (() => undefined);
    this.#synced = hooks.synced ?? (() => undefined);
  }

  get writes(): number {
    return this.#writes;
  }

  /** fsync of a folder, timed. */
  async #syncDir(dir: string): Promise<void> {
    const t = performance.now();
    await fsyncDir(dir);
    this.#synced('folder', (performance.now() - t) / 1000);
  }

  /** Runs one write; a refusal for space or permission becomes StorageFull or StorageReadOnly. */
  async #refusing<T>(path: string, write: () => Promise<T>): Promise<T> {
    try {
      return await write();
    } catch (err) {
      const refused = asStorageError(err, path);
      if (refused instanceof StorageFull || refused instanceof StorageReadOnly) this.#refused(refused);
      throw refused;
    }
  }

  /** Creates the scratch folder and removes whatever a crash left in it. */
  async init(): Promise<void> {
    await rm(this.#tmpDir, { recursive: true, force: true });
    await this.ensureDir(this.#tmpDir);
  }

  /** Atomically replaces (or creates) `path` with `data`. */
  writeFile(path: string, data: string | Uint8Array): Promise<void> {
    return this.#refusing(path, async () => {
      const { tmp, closing } = await this.#writeTemp(data);
      try {
        await this.#intoDir(path, () => rename(tmp, path));
      } catch (err) {
        await Promise.all([closing, dropTemp(tmp)]);
        throw err;
      }
      await Promise.all([closing, this.#syncDir(dirname(path))]);
      this.#writes++;
    });
  }

  /**
   * Creates `path` with `data` only if no file of that name exists: link(2) fails with
   * EEXIST atomically, which is how callers reserve a unique name. Returns false then.
   */
  createFile(path: string, data: string | Uint8Array): Promise<boolean> {
    return this.#refusing(path, async () => {
      const { tmp, closing } = await this.#writeTemp(data);
      try {
        await this.#intoDir(path, () => link(tmp, path));
      } catch (err) {
        await Promise.all([closing, dropTemp(tmp)]);
        if (isErrno(err, 'EEXIST')) return false;
        throw err;
      }
      await Promise.all([closing, dropTemp(tmp), this.#syncDir(dirname(path))]);
      this.#writes++;
      return true;
    });
  }

  /**
   * Runs `move` (a rename or link to `path`), creating the destination folder only when the
   * move finds it missing: asking first would cost every write a mkdir.
   */
  async #intoDir(path: string, move: () => Promise<void>): Promise<void> {
    try {
      await move();
    } catch (err) {
      if (!isErrno(err, 'ENOENT')) throw err;
      await this.ensureDir(dirname(path));
      await move();
    }
  }

  /**
   * Moves a finished temporary file (an upload) to `path` if no file of that name exists:
   * fsyncs it, links it in, fsyncs the folder, and removes the temporary name either way.
   * Returns false when `path` was there already (content-addressed: the same bytes).
   */
  moveIn(tmp: string, path: string): Promise<boolean> {
    return this.#refusing(path, async () => {
      try {
        const fd = await byFd.open(tmp, 'r');
        try {
          await byFd.datasync(fd);
        } finally {
          await byFd.close(fd);
        }
        try {
          await this.#intoDir(path, () => link(tmp, path));
        } catch (err) {
          if (isErrno(err, 'EEXIST')) return false;
          throw err;
        }
        await this.#syncDir(dirname(path));
        this.#writes++;
        return true;
      } finally {
        await dropTemp(tmp);
      }
    });
  }

  /** Removes `path` durably. Returns false when it did not exist. */
  removeFile(path: string): Promise<boolean> {
    return this.#refusing(path, async () => {
      try {
        await unlink(path);
      } catch (err) {
        if (isErrno(err, 'ENOENT')) return false;
        throw err;
      }
      await fsyncDir(dirname(path));
      return true;
    });
  }

  /**
   * mkdir -p, fsyncing the parent of each folder it creates so the folder itself is durable.
   * Creations run one at a time: a second caller for the same (or a nested) folder waits
   * until the first has synced the parents, rather than finding the folder there and
   * acknowledging a write inside it while the folder's own entry may not be on disk yet.
   */
  ensureDir(dir: string): Promise<void> {
    if (this.#knownDirs.has(dir)) return Promise.resolve();
    const next = this.#making.catch(() => undefined).then(() => this.#makeDir(dir));
    this.#making = next;
    return next;
  }

  async #makeDir(dir: string): Promise<void> {
    if (this.#knownDirs.has(dir)) return;
    const created = await mkdirp(dir);
    if (created !== undefined) {
      // `created` is the first folder made; fsync every parent from there down.
      let d = dir;
      const parents: string[] = [];
      while (d.length >= created.length) {
        parents.push(dirname(d));
        d = dirname(d);
      }
      for (const p of parents.reverse()) await fsyncDir(p);
    }
    this.#knownDirs.add(dir);
  }

  /**
   * Writes `data` to a new temp file and fdatasyncs it. The descriptor is closed while the
   * caller moves the file into place (`closing`, which never rejects): the data is already
   * on disk, so the close only tidies up and need not add a round trip to every write.
   */
  async #writeTemp(data: string | Uint8Array): Promise<{ tmp: string; closing: Promise<void> }> {
    // Unique across the processes sharing the folder (server and CLI), even when a crashed
    // process with the same pid left a file behind.
    const tmp = join(this.#tmpDir, `${process.pid}-${++this.#tmpCounter}-${this.#ids.base62(6)}.tmp`);
    const fd = await byFd.open(tmp, 'wx', 0o600);
    try {
      await writeAll(fd, data);
      // fdatasync: the data and the size needed to read it back, not the timestamps.
      const t = performance.now();
      await byFd.datasync(fd);
      this.#synced('file', (performance.now() - t) / 1000);
    } catch (err) {
      // A write cut short (a full disk) leaves no partial temp file behind.
      await byFd.close(fd).catch(() => undefined);
      await dropTemp(tmp);
      throw err;
    }
    return { tmp, closing: byFd.close(fd).catch(() => undefined) };
  }
}

/** Removes a temp name that has served: a failure only leaves clutter for init() to sweep, never fails the write. */
const dropTemp = (tmp: string): Promise<void> => unlink(tmp).catch(() => undefined);

/** Entries written between two turns of the event loop by stateJson: a short slice of work. */
export const STATE_CHUNK = 2_048;

/**
 * A state file's object, `{key: value, ...}`, written STATE_CHUNK entries at a time with a
 * turn of the event loop between chunks, so a large one (the view counts of many pastes,
 * the buckets of many clients) does not hold every request while it is written, as one
 * written in one go did (measured: see bench/README.md). `entries` may change meanwhile (a
 * Map iterated as it is changed sees new keys and skips deleted ones); the caller marks
 * what changed after it started as still to save. Each value is written as `value(v)` is at
 * its turn.
 */
export async function stateJson<V>(entries: Iterable<readonly [string, V]>, value: (v: V) => unknown): Promise<string> {
  const chunks: string[] = [];
  // Null prototype: keys may come from clients, and "__proto__" must stay a plain key.
  let chunk: Record<string, unknown> = Object.create(null);
  let n = 0;
  for (const [key, v] of entries) {
    chunk[key] = value(v);
    if (++n < STATE_CHUNK) continue;
    chunks.push(JSON.stringify(chunk).slice(1, -1));
    chunk = Object.create(null);
    n = 0;
    await nextTurn();
  }
  if (n > 0) chunks.push(JSON.stringify(chunk).slice(1, -1));
  return `{${chunks.join(',')}}`;
}

/**
 * The parsed contents of a small state file that only speeds things up or carries over
 * counters (buckets, view counts, recent list): missing or torn (unparsable) yields
 * undefined and the caller starts afresh. Other I/O errors propagate: they need an operator.
 */
export async function readStateFile(path: string): Promise<unknown> {
  const text = await readTextIfThere(path);
  if (text === null) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    // JSON.parse of a string throws SyntaxError only: a torn or hand-edited file.
    return undefined;
  }
}
