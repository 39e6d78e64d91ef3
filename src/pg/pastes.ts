import type { ISql, Sql, TransactionSql } from 'postgres';
import { RandomIds } from '../crypto/random.ts';
import { HASH_LENGTH, type Paste } from '../paste/paste.ts';
import {
  checkQuota,
  type CorruptPaste,
  type FileQuota,
  type Listing,
  type MakePaste,
  type PasteHead,
  type PasteRepository,
  type Txn,
  sweepTxn,
} from '../paste/repository.ts';
import type { PasteUpkeep } from '../backend.ts';
import { POOL_SIZE } from './connect.ts';
import { PgPasteHeads } from './paste-head.ts';
import { PasteIdentity } from './paste-identity.ts';
import { fileBytesOf } from './owner-lists.ts';
import { type SharedCacheOptions, SharedPasteCache } from './paste-cache.ts';
import { pasteColumns, pasteOf, revisionOf, revisionRowOf, rowOf, sweepTimeOf } from './paste-row.ts';

/**
 * The advisory lock class a transaction on a paste that has no row takes (with the hash's
 * hashtext as the other key), so that two of them on one hash also run one after the other.
 * The two-key lock space does not overlap the one-key space migrate.ts locks in.
 */
const MISSING_PASTE_LOCK = 0x7061_7374;

/**
 * The advisory lock class of a user's writes that add files (with the user's id as the other
 * key): held from the count of their files to the commit, so on every instance one at a time.
 */
const OWNER_FILES_LOCK = 0x7175_6f74;

/**
 * Pastes a sweep slice visits at once, each in its own transaction: half the pool, so the
 * requests that arrive meanwhile still find connections.
 */
const SWEEP_PARALLEL = Math.max(1, Math.floor(POOL_SIZE / 2));

/**
 * The pastes in PostgreSQL (`pastes`, `paste_revisions`), with the file store's contract
 * (store/pastes.ts): the hash and its short code are reserved together (the unique
 * generated `shortcode` column), every change goes through `transact` under the row's lock,
 * and each commit is durable before its promise resolves. Reads by hash go through a cache
 * that other servers' and the CLI's changes reach within a second (pg/paste-cache.ts); it
 * is bypassed until `listen` and in the CLI. What decides (a transaction) reads the row.
 */
export class PgPasteStore implements PasteRepository, PasteUpkeep {
  /** Told of a paste the expiry sweep wiped that held files (the file store's release: paste/files.ts). */
  released: ((hash: string) => Promise<void>) | undefined;
  readonly #ids = new RandomIds();
  /** Expired pastes the sweep wiped, and tombstones it removed (README, Metrics). */
  readonly #swept = { wiped: 0, removed: 0 };
  /** Reads that asked the database, and paste changes committed (README, Metrics). */
  #commits = 0;
  /** A row read again unchanged comes back as the same object (paste-identity.ts). */
  readonly #identity: PasteIdentity;
  readonly #cache: SharedPasteCache;
  readonly #heads: PgPasteHeads;

  constructor(
    private readonly sql: Sql,
    cacheBytes = 32 * 1024 * 1024,
    cacheOptions: SharedCacheOptions = {},
  ) {
    this.#identity = new PasteIdentity(cacheBytes);
    this.#cache = new SharedPasteCache(sql, cacheBytes, cacheOptions);
    this.#heads = new PgPasteHeads(sql);
  }

  /** Starts hearing of other processes' changes, which lets the cache serve; false if LISTEN cannot be had. */
  listen(): Promise<boolean> {
    return this.#cache.start();
  }

  /** Whether every notification committed a moment ago has been heard (paste-cache.ts). */
  heardRecently(): boolean {
    return this.#cache.heardRecently();
  }

  /** Stops hearing of changes: the cache is dropped and bypassed until `listen` again. */
  unlisten(): Promise<void> {
    return this.#cache.stop();
  }

  /** Stops for good; the pool is the caller's to end. */
  close(): Promise<void> {
    return this.#cache.close();
  }

  /** The paste as the cache holds it, or undefined: then the caller asks `get`. */
  cached(hash: string): Paste | null | undefined {
    return this.#cache.cached(hash);
  }

  async get(hash: string): Promise<Paste | null> {
    return this.#cache.get(hash, async (cacheable) => {
      const [row] = await this.sql`select ${pasteColumns(this.sql)} from pastes where hash = ${hash}`;
      if (row === undefined) return null;
      // The cache keeps one object per version itself; bypassed, the identities do (paste-identity.ts).
      return cacheable ? pasteOf(row) : this.#identity.of(pasteOf(row));
    });
  }

  /**
   * The paste for a page that shows the beginning of its text (PasteRepository.head): a long one's row is read only
   * that far.
   */
  async head(hash: string, chars: number): Promise<PasteHead | null> {
    const head = await this.#heads.read(hash, chars, (p) => this.#identity.of(p));
    if (head === null || head.size !== undefined) return head;
    // Not long: read through the cache, as any read is, so that the next page of it asks the
    // database nothing (a head read alone never filled the cache, and every view asked).
    const paste = await this.get(hash);
    return paste === null ? null : { paste };
  }

  /** This server folded views into a paste's row (pg/views.ts): a cached copy takes its new count at once. */
  recount(hash: string, viewCount: number): void {
    this.#cache.recount(hash, viewCount);
  }

  /** The newest count of the paste's row the cache heard of since it read it, beyond the copy's own (pg/views.ts). */
  viewCount(hash: string): number | undefined {
    return this.#cache.viewCount(hash);
  }

  async getByShortcode(code: string): Promise<Paste | null> {
    const [row] = await this.sql`select ${pasteColumns(this.sql)} from pastes where shortcode = ${code}`;
    return row === undefined ? null : this.#identity.of(pasteOf(row));
  }

  get sweepStats(): { wiped: number; removed: number } {
    return { ...this.#swept };
  }

  /** What the cache did: reads it answered, reads that went to the database, what it holds. */
  get cacheStats(): { hits: number; misses: number; bytes: number; entries: number } {
    return this.#cache.stats;
  }

  /** Creates and changes committed since start: the durable writes /metrics counts on this backend. */
  get commits(): number {
    return this.#commits;
  }

  /**
   * Stores a new paste under a free hash, `first` tried before random ones, as the file
   * store does: the insert refuses a taken hash or short code (ON CONFLICT DO NOTHING),
   * which means another draw. The listing's entry is written beside the insert, and when
   * one of the two fails the other is undone, so a refused create leaves neither.
   */
  async create(make: MakePaste, listing?: Listing, first?: string, quota?: FileQuota): Promise<Paste> {
    for (let candidate = first; ; candidate = undefined) {
      const paste = await make(candidate ?? this.#ids.base62(HASH_LENGTH));
      const insert =
        quota === undefined
          ? this.#insert(this.sql, paste)
          : this.sql.begin(async (tx) => {
              await this.#withinQuota(tx, quota, paste);
              return this.#insert(tx, paste);
            });
      const [row, entry] = await Promise.allSettled([insert, listing?.add(paste)]);
      const made = row.status === 'fulfilled' && row.value;
      if (entry.status === 'rejected') {
        if (made) await this.sql`delete from pastes where hash = ${paste.hash}`.catch(() => undefined);
        throw entry.reason;
      }
      if (!made) await listing?.withdraw(paste).catch(() => undefined);
      if (row.status === 'rejected') throw row.reason;
      if (made) {
        this.#commits++;
        return paste;
      }
    }
  }

  /** Inserts a paste's row unless its hash or short code is taken; answers whether it did. */
  async #insert(sql: ISql, p: Paste, sweepAt = sweepTimeOf(p)): Promise<boolean> {
    const rows = await sql`insert into pastes ${sql(rowOf(p, sweepAt))} on conflict do nothing returning hash`;
    return rows.length === 1;
  }

  /**
   * Takes the owner's lock (held until the transaction ends) and refuses `next` past their
   * quota, counting their other pastes' files as committed once the lock is had.
   */
  async #withinQuota(tx: TransactionSql, quota: FileQuota, next: Paste): Promise<void> {
    await tx`select pg_advisory_xact_lock(${OWNER_FILES_LOCK}, ${quota.ownerId})`;
    const others = (await fileBytesOf(tx, [quota.ownerId], next.hash)).get(quota.ownerId) ?? 0;
    checkQuota(quota, others, next);
  }

  /** A row cannot be half written: there is never a damaged paste to remove. */
  async removeDamaged(_hash: string): Promise<CorruptPaste | null> {
    return null;
  }

  /**
   * Reads, decides and writes one paste in one transaction holding its row's lock, so of
   * any number of transactions on a paste each sees the one before's outcome (one reader
   * for a one-time paste). `onCommit` runs once the commit is durable, before the answer.
   */
  transact<T>(hash: string, fn: (paste: Paste | null) => Txn<T> | Promise<Txn<T>>): Promise<T> {
    return this.#transact(hash, fn, null);
  }

  /** `transact`; with `visitedAt`, a transaction that changes nothing moves the paste's sweep time on. */
  async #transact<T>(
    hash: string,
    fn: (paste: Paste | null) => Txn<T> | Promise<Txn<T>>,
    visitedAt: number | null,
  ): Promise<T> {
    // Our own change is dropped from the cache at once (its announcement follows), even
    // when the outcome of the commit is unknown; nothing caches the new version but a read.
    let txn: Txn<T>;
    let wrote = false;
    try {
      txn = await this.sql.begin(async (tx) => {
        let current = await this.#lock(tx, hash);
        if (current === null) {
          // No row to lock: the hash itself is locked, then looked for again (one may have been made meanwhile).
          await tx`select pg_advisory_xact_lock(${MISSING_PASTE_LOCK}, hashtext(${hash}))`;
          current = await this.#lock(tx, hash);
        }
        const decided = await fn(current);
        // The row's lock, then the owner's: a create takes only the owner's, so no two wait on each other.
        if (decided.quota !== undefined && decided.next !== undefined && decided.next !== 'delete')
          await this.#withinQuota(tx, decided.quota, decided.next);
        wrote = await this.#apply(tx, hash, current, decided);
        if (visitedAt !== null && decided.next === undefined && current !== null) {
          // The sweep looked and found nothing due: as the file store drops the index entry
          // it visited, the paste is next looked at when it is due, if ever.
          const next = sweepTimeOf(current);
          await tx`update pastes set sweep_at = ${next !== null && next > visitedAt ? new Date(next) : null}
          where hash = ${hash}`;
        }
        return decided;
      });
    } finally {
      this.#cache.forget(hash);
    }
    if (wrote) this.#commits++;
    txn.onCommit?.();
    return txn.result as T;
  }

  /** The paste, its row locked until the transaction ends; null when there is none. */
  async #lock(tx: TransactionSql, hash: string): Promise<Paste | null> {
    const [row] = await tx`select ${pasteColumns(tx)} from pastes where hash = ${hash} for update`;
    return row === undefined ? null : pasteOf(row);
  }

  /**
   * Does what a transaction's callback asked, in the file store's order, within its
   * transaction; answers whether it asked for any change.
   */
  async #apply<T>(tx: TransactionSql, hash: string, current: Paste | null, txn: Txn<T>): Promise<boolean> {
    if (txn.dropRevisions === true) await tx`delete from paste_revisions where hash = ${hash}`;
    if (txn.keep !== undefined) {
      const kept = revisionRowOf(hash, txn.keep);
      // A version kept again under its number replaces the one kept before, as its file would.
      await tx`insert into paste_revisions ${tx(kept)} on conflict (hash, revision) do update
        set updated_at = excluded.updated_at, content_json = excluded.content_json,
            bytes = excluded.bytes, fields = excluded.fields`;
    }
    if (txn.next === 'delete') {
      // Its kept revisions go with it (ON DELETE CASCADE).
      await tx`delete from pastes where hash = ${hash}`;
    } else if (txn.next !== undefined) {
      const due = sweepTimeOf(txn.next);
      const sweepAt = txn.sweepAt === undefined || (due !== null && due < txn.sweepAt) ? due : txn.sweepAt;
      if (current === null) {
        // Under the hash's lock: a row made since would have been found. A taken short code refuses it.
        if (!(await this.#insert(tx, txn.next, sweepAt)))
          throw new Error(`paste ${hash}: its short code is another paste's`);
      } else {
        // The count moves by what the transaction changed of it: views folded in beside the
        // row meanwhile (pg/views.ts) stay counted, and a burn takes them into the row
        // (migrations/014-paste-views.sql).
        const { hash: _same, view_count: _count, ...changed } = rowOf(txn.next, sweepAt);
        await tx`update pastes set ${tx(changed)}, view_count = view_count + ${txn.next.view_count - current.view_count}
          where hash = ${hash}`;
      }
      if (txn.dropBelow !== undefined)
        await tx`delete from paste_revisions where hash = ${hash} and revision < ${txn.dropBelow}`;
    }
    return txn.dropRevisions === true || txn.keep !== undefined || txn.next !== undefined;
  }

  /** The numbers of the revisions kept for a paste (not the current one), ascending. */
  async revisions(hash: string): Promise<number[]> {
    const rows = await this.sql`select revision from paste_revisions where hash = ${hash} order by revision`;
    return rows.map((r) => r['revision'] as number);
  }

  /** A kept revision of the paste `hash`, or null when there is none of that number. */
  async getRevision(hash: string, revision: number): Promise<Paste | null> {
    const [row] = await this.sql`select content_json, fields from paste_revisions
      where hash = ${hash} and revision = ${revision}`;
    return row === undefined ? null : revisionOf(row['content_json'] as string, row['fields']);
  }

  /** When a kept revision was saved and its text's size, without reading its text. */
  async revisionFacts(hash: string, revision: number): Promise<{ savedAt: number; bytes: number } | null> {
    const [row] = await this.sql`select (extract(epoch from updated_at) * 1000)::float8 as saved_at, bytes
      from paste_revisions where hash = ${hash} and revision = ${revision}`;
    return row === undefined ? null : { savedAt: row['saved_at'] as number, bytes: row['bytes'] as number };
  }

  /**
   * One bounded part of the expiry sweep (README, Expiry), as the file store's: visits at
   * most `limit` pastes whose sweep time has come, oldest first, a few at a time. An expired
   * paste has its content, title and password wiped, leaving a tombstone that answers 410
   * "expired" for TOMBSTONE_MS; a tombstone that old, expired or burned, is deleted; kept
   * revisions go with either. Every visit moves the paste's sweep time on, so the next
   * slice goes on where this one stopped.
   */
  async sweepSlice(now: number, limit: number): Promise<{ changed: number; more: boolean }> {
    const due = await this.sql`select hash from pastes where sweep_at <= ${new Date(now)}
      order by sweep_at limit ${limit}`;
    let changed = 0;
    let next = 0;
    const worker = async (): Promise<void> => {
      for (let row = due[next++]; row !== undefined; row = due[next++]) {
        if (await this.#sweepOne(row['hash'] as string, now)) changed++;
      }
    };
    await Promise.all(Array.from({ length: Math.min(SWEEP_PARALLEL, due.length) }, worker));
    return { changed, more: due.length >= limit };
  }

  /** Wipes or removes one paste if it is due; answers whether it changed. */
  async #sweepOne(hash: string, now: number): Promise<boolean> {
    let releasing: Promise<void> | undefined;
    const release = this.released;
    const released = release === undefined ? undefined : (h: string): void => void (releasing = release(h));
    const done = await this.#transact(hash, (p) => sweepTxn(p, now, released), now);
    // The wiped paste's files are told to the file sweep before this sweep says it is done.
    await releasing;
    if (done !== null) this.#swept[done]++;
    return done !== null;
  }
}
