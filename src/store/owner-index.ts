import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { asStorageError, isErrno } from '../storage/errors.ts';
import { byFd, fsyncDir, readTextIfThere, writeAll } from '../storage/fs.ts';
import type { DurableFiles } from './files.ts';

/** Lines waiting for the next write of one user's file, and who waits for them. */
interface Batch {
  lines: string;
  waiters: { resolve: () => void; reject: (err: unknown) => void }[];
}

/**
 * Which pastes each user owns, so "My pastes" never scans the store: one append-only
 * file per user of `+hash` / `-hash` lines, fsynced before the create or delete that
 * wrote it is acknowledged. A line may outlive its paste after a crash (a create that
 * never finished), so readers check each hash against the store.
 *
 * Appends are group-committed: while one write+fsync of a user's file is in flight, new
 * lines queue up and the next single write+fsync makes all of them durable, so a burst of
 * creates by one user costs a couple of fsyncs, not one each in a row.
 */
export class OwnerIndex {
  readonly #dir: string;
  readonly #queued = new Map<number, Batch>();
  readonly #writing = new Set<number>();
  /** Users whose file this process has made sure is in the folder durably. */
  readonly #synced = new Set<number>();
  /** Each counted user's number of pastes, and the file's size when it was counted. */
  readonly #counts = new Map<number, { size: number; count: number }>();

  constructor(
    dataDir: string,
    private readonly files: DurableFiles,
  ) {
    this.#dir = join(dataDir, 'owners');
  }

  async init(): Promise<void> {
    await this.files.ensureDir(this.#dir);
  }

  add(userId: number, hash: string): Promise<void> {
    return this.#append(userId, `+${hash}\n`);
  }

  remove(userId: number, hash: string): Promise<void> {
    return this.#append(userId, `-${hash}\n`);
  }

  /** The user's paste hashes, newest first. */
  async list(userId: number): Promise<string[]> {
    const text = await readTextIfThere(this.#file(userId));
    if (text === null) return [];
    const live = new Set<string>();
    for (const line of text.split('\n')) {
      if (line.startsWith('+')) live.add(line.slice(1));
      else if (line.startsWith('-')) live.delete(line.slice(1));
    }
    return [...live].reverse();
  }

  /**
   * How many pastes the user owns, as `list(userId).length` would say, without reading the
   * whole file each time: a count is kept with the file's size and only the lines appended
   * since (by this process or another, such as the CLI) are read. Each `+` names a new hash
   * and each `-` one listed before (the writers keep it so), so a count is `+` lines less
   * `-` lines.
   */
  async count(userId: number): Promise<number> {
    const known = this.#counts.get(userId);
    let fh: Awaited<ReturnType<typeof open>>;
    try {
      fh = await open(this.#file(userId), 'r');
    } catch (err) {
      if (isErrno(err, 'ENOENT')) return 0;
      throw err;
    }
    try {
      const { size } = await fh.stat();
      if (known !== undefined && known.size === size) return known.count;
      // A file that shrank was written anew (a restore): count it whole.
      const from = known !== undefined && known.size < size ? known.size : 0;
      const bytes = Buffer.allocUnsafe(size - from);
      let got = 0;
      while (got < bytes.length) {
        const { bytesRead } = await fh.read(bytes, got, bytes.length - got, from + got);
        if (bytesRead === 0) break;
        got += bytesRead;
      }
      // Only whole lines count: a line being appended now is counted on the next call.
      const whole = bytes.lastIndexOf(0x0a, got - 1) + 1;
      const count = (from === 0 ? 0 : (known?.count ?? 0)) + countLines(bytes.subarray(0, whole));
      this.#counts.set(userId, { size: from + whole, count });
      return count;
    } finally {
      await fh.close();
    }
  }

  #file(userId: number): string {
    return ownerIndexFile(this.#dir, userId);
  }

  #append(userId: number, line: string): Promise<void> {
    return new Promise((resolve, reject) => {
      let batch = this.#queued.get(userId);
      if (batch === undefined) this.#queued.set(userId, (batch = { lines: '', waiters: [] }));
      batch.lines += line;
      batch.waiters.push({ resolve, reject });
      if (!this.#writing.has(userId)) void this.#drain(userId);
    });
  }

  async #drain(userId: number): Promise<void> {
    this.#writing.add(userId);
    for (let batch = this.#queued.get(userId); batch !== undefined; batch = this.#queued.get(userId)) {
      this.#queued.delete(userId);
      try {
        const fd = await byFd.open(this.#file(userId), 'a', 0o600);
        try {
          const before = (await byFd.fstat(fd)).size;
          try {
            await writeAll(fd, batch.lines);
            await byFd.datasync(fd);
          } catch (err) {
            // A full disk may have taken part of the lines: cut the file back, so no torn line stays.
            await byFd.ftruncate(fd, before).catch(() => undefined);
            throw asStorageError(err, this.#file(userId));
          }
        } finally {
          // The lines are on disk (or cut back): the close need not hold up their waiters.
          void byFd.close(fd).catch(() => undefined);
        }
        // The first append of this process may have created the file: make its name durable too.
        if (!this.#synced.has(userId)) {
          await fsyncDir(this.#dir);
          this.#synced.add(userId);
        }
        for (const w of batch.waiters) w.resolve();
      } catch (err) {
        for (const w of batch.waiters) w.reject(err);
      }
    }
    this.#writing.delete(userId);
  }
}

/** `+` lines less `-` lines in whole lines of an index file: its number of listed hashes. */
export function countLines(bytes: Uint8Array): number {
  let count = 0;
  let at = 0;
  while (at < bytes.length) {
    if (bytes[at] === 0x2b) count++;
    else if (bytes[at] === 0x2d) count--;
    const end = bytes.indexOf(0x0a, at);
    if (end === -1) break;
    at = end + 1;
  }
  return count;
}

/** One user's index file under the index folder (`owners/<user id>.log`). */
export const ownerIndexFile = (dir: string, userId: number): string => join(dir, `${userId}.log`);

/** A fresh index file's text for these hashes, oldest first (a restore writes it whole). */
export const ownerIndexText = (hashes: readonly string[]): string => hashes.map((h) => `+${h}\n`).join('');
