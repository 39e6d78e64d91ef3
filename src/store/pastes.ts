import {
  checkQuota,
  CorruptPaste,
  type FileQuota,
  TOMBSTONE_MS,
  type Listing,
  type MakePaste,
  type PasteHead,
  type Txn,
  sweepTxn,
} from '../paste/repository.ts';
import { open, rmdir, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { RandomIds } from '../crypto/random.ts';
import { isErrno } from '../storage/errors.ts';
import { listDir, readText } from '../storage/fs.ts';
import type { DurableFiles } from './files.ts';
import { KeyedMutex } from './mutex.ts';
import { PasteCache } from '../cache/paste-cache.ts';
import { contentOf, HASH_LENGTH, isTombstone, shortcodeOf, type Paste } from '../paste/paste.ts';
import { DamagedRecord, fileText, keptFacts, keptText, parseFile } from './paste-record.ts';
import { PasteHeads } from './paste-head.ts';

/** A disk read in flight, and whether a commit to its paste has made it stale. */
interface Reading {
  stale: boolean;
  read: Promise<Paste | null>;
}

const NO_READ: Promise<Paste | null> = Promise.resolve(null);

/**
 * One JSON file per paste at `pastes/<2 chars>/<shortcode>.json`. The shortcode is the
 * hash's first six characters, so one file reserves both the hash and the short link,
 * and `/s/{code}` is one file read. Folders are sharded by the first two
 * characters (3,844 of them), so none grows past a few thousand entries.
 *
 * Only the server writes pastes, so the cache is authoritative once a paste has been read
 * or written; every change goes through `transact`, under a per-paste lock.
 */
export class PasteStore {
  /** Told of a paste the expiry sweep wiped that held files (the file store's release: paste/files.ts). */
  released: ((hash: string) => Promise<void>) | undefined;
  readonly #root: string;
  readonly #expiryRoot: string;
  readonly #locks = new KeyedMutex();
  /**
   * One write adding files per owner at a time, from its count to its write (FileQuota), taken
   * after the paste's lock: one server holds the folder (store/instance.ts), so this is every
   * write that could cross it.
   */
  readonly #quotas = new KeyedMutex();
  readonly #cache: PasteCache<Paste>;
  readonly #ids = new RandomIds();
  /** Expired pastes the sweep wiped, and tombstones it removed (README, Metrics). */
  readonly #swept = { wiped: 0, removed: 0 };
  /** Reads answered from memory, and reads that went to the disk (README, Metrics). */
  #hits = 0;
  #misses = 0;
  /**
   * Disk reads in flight, by shortcode: a read asked for again before it ends (a link just
   * shared, opened by many at once) joins it, rather than reading and parsing the file
   * again, and every page made from it is made from the same paste object
   * (web/page-parts.ts). A commit to that paste makes its read in flight stale (#invalidate):
   * no longer joined, and what it read fills no cache. A commit to any other paste leaves
   * it alone: with one count for all, under a stream of creates a read from the disk
   * almost always overlapped one, and a cold cache stayed cold (every read of a mixed load
   * went to the disk, at a fraction of the warm cache's rate).
   */
  readonly #reading = new Map<string, Reading>();
  /** Long pastes' files read only as far as their pages show (paste-head.ts). */
  readonly #heads = new PasteHeads();
  /**
   * Told of each paste the sweep removed, before its index entry goes, so that its owner's
   * list forgets it as it does a deleted one (store/open.ts gives it the owner index).
   */
  onSwept: (paste: Paste) => Promise<void> = async () => undefined;
  /** Damaged files already reported, so each is reported once however often it is asked for. */
  readonly #reported = new Set<string>();

  constructor(
    dataDir: string,
    private readonly files: DurableFiles,
    cacheBytes = 32 * 1024 * 1024,
    /** Told once about each damaged paste file found (the server's log). */
    private readonly onDamaged: (damage: CorruptPaste) => void = () => undefined,
  ) {
    this.#root = join(dataDir, 'pastes');
    this.#expiryRoot = join(dataDir, 'expiry');
    this.#cache = new PasteCache(cacheBytes);
  }

  async init(): Promise<void> {
    await this.files.ensureDir(this.#root);
    await this.files.ensureDir(this.#expiryRoot);
  }

  #path(shortcode: string): string {
    return join(this.#root, shortcode.slice(0, 2), `${shortcode}.json`);
  }

  /** A kept revision's file: `pastes/<ab>/<abCDEF>.r<N>.json`. */
  #revisionPath(shortcode: string, revision: number): string {
    return join(this.#root, shortcode.slice(0, 2), `${shortcode}.r${revision}.json`);
  }

  /** The numbers of the revisions kept for a paste (not the current one), ascending. */
  async revisions(hash: string): Promise<number[]> {
    const code = shortcodeOf(hash);
    const prefix = `${code}.r`;
    return (await listDir(join(this.#root, code.slice(0, 2))))
      .filter((f) => f.startsWith(prefix) && f.endsWith('.json'))
      .map((f) => Number(f.slice(prefix.length, -5)))
      .filter((n) => Number.isInteger(n) && n >= 1)
      .sort((a, b) => a - b);
  }

  /**
   * When revision `revision` of paste `hash` was saved and the size of its text, read from
   * the first few KB of its kept file (the whole file only for one kept before sizes led
   * it); null when there is none, a CorruptPaste when it cannot be read.
   */
  async revisionFacts(hash: string, revision: number): Promise<{ savedAt: number; bytes: number } | null> {
    let head: string;
    try {
      head = await readHead(this.#revisionPath(shortcodeOf(hash), revision), 4_096);
    } catch (err) {
      if (isErrno(err, 'ENOENT')) return null;
      throw err;
    }
    const facts = keptFacts(head, hash);
    if (facts !== null) return facts;
    const p = await this.getRevision(hash, revision);
    return p === null ? null : { savedAt: p.updated_at, bytes: Buffer.byteLength(contentOf(p)) };
  }

  /** A kept revision of the paste `hash`, or null when there is none of that number. */
  async getRevision(hash: string, revision: number): Promise<Paste | null> {
    let text: string;
    try {
      text = await readText(this.#revisionPath(shortcodeOf(hash), revision));
    } catch (err) {
      if (isErrno(err, 'ENOENT')) return null;
      throw err;
    }
    let p: Paste;
    try {
      p = parseFile(text);
    } catch (err) {
      if (!(err instanceof DamagedRecord)) throw err;
      throw this.#damage(this.#revisionPath(shortcodeOf(hash), revision), `${shortcodeOf(hash)}.r${revision}`, err);
    }
    return p.hash === hash ? p : null;
  }

  /** A damaged file as a CorruptPaste, told once (by `key`) to `onDamaged`. */
  #damage(path: string, key: string, err: DamagedRecord): CorruptPaste {
    const damage = new CorruptPaste(path, err.reason, err.hash, err.ownerId);
    if (!this.#reported.has(key)) {
      this.#reported.add(key);
      this.onDamaged(damage);
    }
    return damage;
  }

  /** Removes the paste's kept revisions, or only those numbered below `below`. */
  async #dropRevisions(code: string, below = Number.POSITIVE_INFINITY): Promise<void> {
    const prefix = `${code}.r`;
    const dir = join(this.#root, code.slice(0, 2));
    for (const f of await listDir(dir)) {
      if (!f.startsWith(prefix) || !f.endsWith('.json')) continue;
      const n = Number(f.slice(prefix.length, -5));
      if (!(n >= below)) await this.files.removeFile(join(dir, f));
    }
  }

  /**
   * The paste with this exact hash, or null. Callers validate the hash's shape first. A
   * damaged file is a CorruptPaste, unless it says it is another paste's.
   */
  async get(hash: string): Promise<Paste | null> {
    let paste: Paste | null;
    try {
      paste = await this.getByShortcode(shortcodeOf(hash));
    } catch (err) {
      if (err instanceof CorruptPaste && err.hash !== null && err.hash !== hash) return null;
      throw err;
    }
    return paste !== null && paste.hash === hash ? paste : null;
  }

  /**
   * The paste for a page that shows the beginning of its text (PasteRepository.head): a long one's file is read only
   * that far.
   */
  async head(hash: string, chars: number): Promise<PasteHead | null> {
    const code = shortcodeOf(hash);
    const cached = this.#cache.get(code);
    const read = cached === undefined ? await this.#heads.read(this.#path(code), chars) : 'whole';
    if (read !== 'whole' && read !== null && read.paste.hash === hash) {
      this.#misses++;
      return read;
    }
    // A short file, one laid out otherwise or damaged, or another paste's: the whole read knows what to do.
    const paste = await this.get(hash);
    return paste === null ? null : { paste };
  }

  /**
   * The paste with this exact hash as the cache knows it, without waiting for the disk:
   * undefined when the cache cannot say. The cache is authoritative for what it holds.
   */
  cached(hash: string): Paste | null | undefined {
    const p = this.#cache.get(shortcodeOf(hash));
    if (p === undefined) return undefined;
    this.#hits++;
    return p.hash === hash ? p : null;
  }

  /** What the sweep did since start: expired pastes wiped, old tombstones removed. */
  get sweepStats(): { wiped: number; removed: number } {
    return { ...this.#swept };
  }

  /** What the cache did: reads it answered, reads that went to the disk, what it holds. */
  get cacheStats(): { hits: number; misses: number; bytes: number; entries: number } {
    return { hits: this.#hits, misses: this.#misses, bytes: this.#cache.bytes, entries: this.#cache.size };
  }

  async getByShortcode(code: string): Promise<Paste | null> {
    const cached = this.#cache.get(code);
    if (cached !== undefined) {
      this.#hits++;
      return cached;
    }
    const going = this.#reading.get(code);
    if (going !== undefined) {
      this.#hits++;
      return going.read;
    }
    this.#misses++;
    const reading: Reading = { stale: false, read: NO_READ };
    reading.read = this.#read(code, reading);
    this.#reading.set(code, reading);
    try {
      return await reading.read;
    } finally {
      if (this.#reading.get(code) === reading) this.#reading.delete(code);
    }
  }

  /**
   * A commit to paste `code` is about to land or has just landed: a read of it in flight
   * may hold what the commit replaces. Called before and after each commit's write, so a
   * read that began during the write is caught too.
   */
  #invalidate(code: string): void {
    const going = this.#reading.get(code);
    if (going === undefined) return;
    going.stale = true;
    this.#reading.delete(code);
  }

  /**
   * Runs `remove`, which takes paste `code`'s file away, so that no copy of it is left in
   * memory: not before (the cache, reads in flight), nor after, whether or not it
   * succeeded. A read that began and ended while it ran found the file still there and
   * cached it; nothing would have replaced that copy.
   */
  async #removing(code: string, remove: () => Promise<unknown>): Promise<void> {
    this.#invalidate(code);
    this.#cache.delete(code);
    try {
      await remove();
    } finally {
      this.#invalidate(code);
      this.#cache.delete(code);
    }
  }

  /** Reads paste `code` from its file, and caches it unless a commit to it landed meanwhile. */
  async #read(code: string, reading: Reading): Promise<Paste | null> {
    let text: string;
    try {
      text = await readText(this.#path(code));
    } catch (err) {
      if (isErrno(err, 'ENOENT')) return null;
      throw err;
    }
    let paste: Paste;
    try {
      paste = parseFile(text);
      // A file holding another paste's record (copied over it by hand) is damaged too: whose
      // it should be is unknown, so only an admin learns it (and may delete it).
      if (shortcodeOf(paste.hash) !== code) {
        // On a case-insensitive disk `abCDEF` opens `ABcdef.json`: another paste, not damage.
        if (shortcodeOf(paste.hash).toLowerCase() === code.toLowerCase()) return null;
        throw new DamagedRecord(`it holds the record of another paste (${paste.hash})`, null, null);
      }
    } catch (err) {
      if (!(err instanceof DamagedRecord)) throw err;
      // What is left of another paste's record says nothing of whose this file is.
      const own = err.hash === null || shortcodeOf(err.hash) === code;
      // Not cached: a file an operator mends by hand is read again at once.
      throw this.#damage(this.#path(code), code, own ? err : new DamagedRecord(err.reason, null, null));
    }
    // If a commit to this paste landed while we read, our copy may predate it (even a delete): don't cache it.
    if (!reading.stale) this.#cache.set(code, paste);
    return paste;
  }

  /**
   * Stores a new paste under a fresh random hash. `make` builds the record for a hash;
   * a taken shortcode (one in 56 billion per existing paste) just means another draw.
   * The file is put in place with link(2), which fails if the name is taken (on a
   * case-insensitive disk, also by `ABcdef` for `abCDEF`), so the create is exclusive and
   * atomic without asking the disk first. `listing` is the index that lists the paste (its
   * owner's): its entry is written concurrently with the paste, sharing the wait for the
   * disk, and the create succeeds only when both are durable. When one of the two fails (a
   * full disk), the other is undone: an entry is withdrawn, a paste file removed, so a
   * refused create leaves neither. (A crash between the two may leave either; readers of
   * the index check every hash against the store, and a retried create repairs its entry:
   * see api/v1/idempotency.ts.)
   */
  async create(make: MakePaste, listing?: Listing, first?: string, quota?: FileQuota): Promise<Paste> {
    // `first` is tried before any random hash (a retried create's chosen one); if taken, a random one follows.
    for (let candidate = first; ; candidate = undefined) {
      const paste = await make(candidate ?? this.#ids.base62(HASH_LENGTH));
      const code = shortcodeOf(paste.hash);
      const path = this.#path(code);
      let leave: (() => void) | undefined;
      const creating = this.#locks.run(code, async () => {
        if (this.#cache.get(code) !== undefined) return false;
        if (quota !== undefined) leave = await this.#ownerTurn(quota, paste);
        // The expiry index entry goes first: a crash may leave an entry without a paste
        // (the sweep ignores it) but never an expiring paste the sweep cannot find.
        // (An imported tombstone is listed for the day it is removed: sweepTimeOf.)
        const due = sweepTimeOf(paste);
        if (due !== null) await this.#index(due, paste.hash);
        const [file, entry] = await Promise.allSettled([
          this.files.createFile(path, fileText(paste)),
          listing?.add(paste),
        ]);
        const made = file.status === 'fulfilled' && file.value;
        if (entry.status === 'rejected') {
          if (made) {
            // A reader may have found the file meanwhile: what it read must not stay in the cache.
            await this.#removing(code, () => this.files.removeFile(path).catch(() => undefined));
          }
          throw entry.reason;
        }
        if (!made) await listing?.withdraw(paste).catch(() => undefined);
        if (file.status === 'rejected') throw file.reason;
        if (!made) return false;
        // Not cached: the cache holds what is read, so a burst of creates cannot evict it.
        this.#invalidate(code);
        return true;
      });
      const created = await creating.finally(() => leave?.());
      if (created) return paste;
    }
  }

  /**
   * Removes the damaged file of `hash` (or one that names no hash at all), under the paste's
   * lock. Answers what was removed, or null when the file is not damaged (any more): then
   * the caller deletes the paste the ordinary way.
   */
  removeDamaged(hash: string): Promise<CorruptPaste | null> {
    const code = shortcodeOf(hash);
    return this.#locks.run(code, async () => {
      try {
        await this.get(hash);
        return null;
      } catch (err) {
        if (!(err instanceof CorruptPaste)) throw err;
        const path = err.path;
        await this.#removing(code, async () => {
          await this.files.removeFile(path);
          await this.#dropRevisions(code);
        });
        this.#reported.delete(code);
        return err;
      }
    });
  }

  /**
   * The owner's turn for a write adding files (FileQuota), taken under the paste's lock as an
   * edit and a create both take it: once the count of their other pastes' files lets `next`
   * in, answers what ends the turn (after the write); else refuses it, the turn ended.
   */
  async #ownerTurn(quota: FileQuota, next: Paste): Promise<() => void> {
    const leave = await this.#quotas.enter(String(quota.ownerId));
    try {
      checkQuota(quota, await quota.others(next.hash), next);
      return leave;
    } catch (err) {
      leave();
      throw err;
    }
  }

  /** Reads, decides and writes one paste with no other change to it in between. */
  transact<T>(hash: string, fn: (paste: Paste | null) => Txn<T> | Promise<Txn<T>>): Promise<T> {
    const code = shortcodeOf(hash);
    let leave: (() => void) | undefined;
    const done = this.#locks.run(code, async () => {
      const current = await this.get(hash);
      const txn = await fn(current);
      if (txn.quota !== undefined && txn.next !== undefined && txn.next !== 'delete')
        leave = await this.#ownerTurn(txn.quota, txn.next);
      if (txn.dropRevisions === true) await this.#dropRevisions(code);
      if (txn.keep !== undefined)
        await this.files.writeFile(this.#revisionPath(code, txn.keep.revision ?? 1), keptText(txn.keep));
      if (txn.next === 'delete') {
        // Its kept versions go with it, asked or not, as on PostgreSQL: a later paste of its short code must not list
        // them.
        if (txn.dropRevisions !== true || txn.keep !== undefined) await this.#dropRevisions(code);
        await this.#removing(code, () => this.files.removeFile(this.#path(code)));
      } else if (txn.next !== undefined) {
        if (txn.next.expire_at !== null && txn.next.expire_at !== current?.expire_at)
          await this.#index(txn.next.expire_at, hash);
        if (txn.sweepAt !== undefined) await this.#index(txn.sweepAt, hash);
        this.#invalidate(code);
        try {
          await this.files.writeFile(this.#path(code), fileText(txn.next));
        } catch (err) {
          // Which copy the disk holds is not known (the rename may have landed): the next read asks it.
          this.#invalidate(code);
          this.#cache.delete(code);
          throw err;
        }
        // A read begun during the write may have cached the old copy: the new one replaces it.
        this.#invalidate(code);
        this.#cache.set(code, txn.next);
        // After the write: a crash in between leaves a revision too many, never one too few.
        if (txn.dropBelow !== undefined) await this.#dropRevisions(code, txn.dropBelow);
      }
      txn.onCommit?.();
      return txn.result;
    });
    return done.finally(() => leave?.());
  }

  /**
   * Visits every paste the index lists as due: an expired paste has its content, title and
   * password wiped from disk, leaving a tombstone that answers 410 "expired" (rather than a
   * puzzling 404) for TOMBSTONE_MS; a tombstone that old, expired or burned, is deleted.
   * Reads only the index and the pastes it names. Returns how many pastes it changed.
   */
  async sweepExpired(now: number): Promise<number> {
    let changed = 0;
    for (;;) {
      const slice = await this.sweepSlice(now, 1_000);
      changed += slice.changed;
      if (!slice.more) return changed;
    }
  }

  /**
   * One bounded part of the sweep: visits at most `limit` due index entries, a few at a time,
   * and says whether any may be left. Each visited entry is removed, so the next slice goes
   * on where this one stopped; the server runs slices beside its other upkeep (server.ts).
   */
  async sweepSlice(now: number, limit: number): Promise<{ changed: number; more: boolean }> {
    let changed = 0;
    let visited = 0;
    for (const bucket of (await listDir(this.#expiryRoot)).sort()) {
      const bucketStart = Number(bucket) * HOUR_MS;
      if (!/^\d+$/.test(bucket) || bucketStart > now) continue;
      const dir = join(this.#expiryRoot, bucket);
      const entries = await listDir(dir);
      const due = entries.filter((e) => Number(e.split('-')[0]) <= now).slice(0, limit - visited);
      let next = 0;
      const worker = async (): Promise<void> => {
        for (let entry = due[next++]; entry !== undefined; entry = due[next++]) {
          if (await this.#sweepEntry(dir, entry, now)) changed++;
        }
      };
      await Promise.all(Array.from({ length: Math.min(SWEEP_PARALLEL, due.length) }, worker));
      visited += due.length;
      if (due.length === entries.length && bucketStart + HOUR_MS <= now) {
        await rmdir(dir).catch((err: unknown) => {
          // A create for this hour raced us and added an entry: keep the folder.
          if (!isErrno(err, 'ENOTEMPTY') && !isErrno(err, 'ENOENT')) throw err;
        });
      }
      if (visited >= limit) return { changed, more: true };
    }
    return { changed, more: false };
  }

  /** Visits the paste one index entry names, then removes the entry; answers whether the paste changed. */
  async #sweepEntry(dir: string, entry: string, now: number): Promise<boolean> {
    const hash = entry.split('-')[1];
    let releasing: Promise<void> | undefined;
    const release = this.released;
    const released = release === undefined ? undefined : (h: string): void => void (releasing = release(h));
    let visited = null as Paste | null;
    const done =
      hash === undefined
        ? null
        : await this.transact(hash, (p) => {
            visited = p;
            return sweepTxn(p, now, released);
          }).catch((err: unknown) => {
            // A damaged file is reported when found and waits for its owner or an admin; the sweep goes on.
            if (err instanceof CorruptPaste) return null;
            throw err;
          });
    // The wiped paste's files are told to the file sweep before this sweep says it is done.
    await releasing;
    if (done !== null) this.#swept[done]++;
    if (done === 'removed' && visited !== null) await this.onSwept(visited);
    // Losing this unlink in a crash only means the sweep looks at the entry again.
    await unlink(join(dir, entry)).catch((err: unknown) => {
      if (!isErrno(err, 'ENOENT')) throw err;
    });
    return done !== null;
  }

  /** Index entry `expiry/<hour number>/<ms>-<hash>`: an empty file the sweep lists. */
  async #index(at: number, hash: string): Promise<void> {
    await this.files.createFile(expiryEntryPath(this.#expiryRoot, at, hash), '');
  }
}

const HOUR_MS = 3_600_000;

/** The first `bytes` of a file, as text (a multi-byte character cut at the end is only replaced). */
async function readHead(path: string, bytes: number): Promise<string> {
  const fh = await open(path, 'r');
  try {
    const buf = Buffer.alloc(bytes);
    const { bytesRead } = await fh.read(buf, 0, bytes, 0);
    return buf.toString('utf8', 0, bytesRead);
  } finally {
    await fh.close();
  }
}

/** Index entries a sweep slice visits at once: their durable writes share the disk's waits. */
const SWEEP_PARALLEL = 8;

/** Where the expiry index lists `hash` as due at `at`, under the index's root folder. */
export const expiryEntryPath = (root: string, at: number, hash: string): string =>
  join(root, String(Math.floor(at / HOUR_MS)), `${at}-${hash}`);

/**
 * When the sweep must next visit a paste, or null for never: a tombstone (burned or wiped)
 * when it is old enough to remove, a live expiring paste at its expiry. What the index holds
 * for a paste, so a restore can rebuild the index from the pastes alone.
 */
export const sweepTimeOf = (p: Paste): number | null => (isTombstone(p) ? p.updated_at + TOMBSTONE_MS : p.expire_at);
