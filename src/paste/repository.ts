import { PasteError } from './errors.ts';
import { filesOf, withoutFiles } from './files.ts';
import { isExpired, isTombstone, NO_CONTENT, type Paste } from './paste.ts';
import type { TextSize } from './literal.ts';
import type { OwnedFilter } from './owned-search.ts';

/**
 * What the paste service needs of storage, and the records it speaks to it: the seam every
 * backend implements (store/ on the data folder, pg/ on PostgreSQL) without the service
 * knowing which one it has (ARCHITECTURE.md, The storage seam).
 */

/** How long an expired or burned paste's tombstone keeps answering 410 before it goes. */
export const TOMBSTONE_MS = 30 * 86_400_000;

/** What a transaction asks the store to do with the paste once its callback returns. */
export interface Txn<T> {
  result: T;
  next?: Paste | 'delete';
  /** Also list the paste in the expiry index at this time, so the sweep revisits it. */
  sweepAt?: number;
  /** Runs synchronously right after the change is durable and cached. */
  onCommit?: () => void;
  /** Keep this (the version being replaced) as a revision file, durably, before `next` is written. */
  keep?: Paste;
  /** Remove every kept revision first (a delete, a burn, an expiry: README, Revisions). */
  dropRevisions?: true;
  /** Once `next` is written, remove the kept revisions numbered below this (MAX_REVISIONS). */
  dropBelow?: number;
  /** Hold `next` to its owner's quota, checked as it is written (an edit adding files). */
  quota?: FileQuota | undefined;
}

/**
 * A write that adds files, held to their owner's quota in the same step (README, Files): the
 * store refuses it (`quota_exceeded`) when the owner's pastes, this one as written, would hold
 * more than `limit` bytes of files, and no other such write of the owner's may commit between
 * its count and its commit, on any server the store is shared by.
 */
export interface FileQuota {
  readonly ownerId: number;
  readonly limit: number;
  /** The bytes the owner's pastes other than `hash` hold, for a store that cannot count them in its write (the data folder). */
  others(hash: string): Promise<number>;
}

/** The bytes of files a paste holds toward its owner's quota: a burned paste's, going, are not counted. */
export const quotaBytesOf = (p: Paste): number => (p.burned ? 0 : filesOf(p).reduce((n, f) => n + f.size, 0));

/** Refuses `next` when, with the `others` bytes the owner's other pastes hold, it passes the quota. */
export function checkQuota(quota: FileQuota, others: number, next: Paste): void {
  if (others + quotaBytesOf(next) > quota.limit) throw new PasteError('quota_exceeded');
}

/**
 * A paste file that cannot be read as a paste (README, Data on disk and durability): what
 * the store throws for it instead of a paste, saying where it is and what is wrong, and
 * whose it is when that could be read.
 */
export class CorruptPaste extends Error {
  constructor(
    readonly path: string,
    readonly reason: string,
    /** The hash the file names, or null when not even that could be read. */
    readonly hash: string | null,
    readonly ownerId: number | null,
  ) {
    super(`paste file ${path} is damaged: ${reason}`);
  }
}

/** An index that lists pastes (an owner's list): `add` writes an entry durably, `withdraw` takes one back. */
export interface Listing {
  add(paste: Paste): Promise<void>;
  withdraw(paste: Paste): Promise<void>;
}

/**
 * Builds a new paste's record for a hash a create tries; once it resolves, whatever must come
 * before a record of that hash is done (its files' claims: paste/files.ts FileBytes).
 */
export type MakePaste = (hash: string) => Paste | Promise<Paste>;

/** What the service needs of the paste store (store/pastes.ts). */
export interface PasteRepository {
  /** The paste as the cache knows it, without waiting: undefined when the cache cannot say. */
  cached(hash: string): Paste | null | undefined;
  get(hash: string): Promise<Paste | null>;
  getByShortcode(code: string): Promise<Paste | null>;
  /** Creates a new paste under a free hash, trying `first` before random ones; with `quota`, within it. */
  create(make: MakePaste, listing?: Listing, first?: string, quota?: FileQuota): Promise<Paste>;
  transact<T>(hash: string, fn: (paste: Paste | null) => Txn<T> | Promise<Txn<T>>): Promise<T>;
  /**
   * The paste for a page that shows at most the first `chars` characters of its text
   * (README, Web pages), when the store can read less than all of a long one: its
   * `content_json` is then the literal of those characters only, and `size` the whole
   * text's. Such a paste is never cached nor handed to anything but that page.
   */
  head?(hash: string, chars: number): Promise<PasteHead | null>;
  /** Removes a damaged paste file (README, Data on disk and durability); null when it is not damaged. */
  removeDamaged(hash: string): Promise<CorruptPaste | null>;
  /** The numbers of a paste's kept revisions (README, Revisions), and one of them. */
  revisions(hash: string): Promise<number[]>;
  getRevision(hash: string, revision: number): Promise<Paste | null>;
  /** A kept revision's time and text size, without reading its text when the store can help it. */
  revisionFacts(hash: string, revision: number): Promise<{ savedAt: number; bytes: number } | null>;
}

/** A paste as `PasteRepository.head` reads it: `size` is set when `paste` holds only the text's beginning. */
export interface PasteHead {
  readonly paste: Paste;
  readonly size?: TextSize;
}

/** Views counted in memory and folded into the stored pastes later (paste/pending-views.ts). */
export interface ViewCounts {
  /** Counts a view of a paste whose file counts `fileCount`; answers the views the file does not hold yet. */
  add(hash: string, fileCount: number): number;
  pending(hash: string, fileCount: number): number;
}

/** Each user's pastes (store/owner-index.ts). */
export interface OwnerLists {
  add(userId: number, hash: string): Promise<void>;
  remove(userId: number, hash: string): Promise<void>;
  list(userId: number): Promise<string[]>;
  /** `list(userId).length`, without building the list. */
  count(userId: number): Promise<number>;
  /** `list(userId).slice(offset, offset + limit)`, without building the list, when the store can. */
  slice?(userId: number, offset: number, limit: number): Promise<string[]>;
  /** `count` of each user, in one read, when the store can. */
  counts?(userIds: readonly number[]): Promise<Map<number, number>>;
  /**
   * The bytes of the files each user's pastes hold now (burned ones left out), in one query
   * over the pastes that hold files, when the store can (pg/owner-lists.ts).
   */
  fileBytes?(userIds: readonly number[]): Promise<Map<number, number>>;
  /**
   * The user's pastes that may match `filter` (every one that does, in `list`'s order, and
   * perhaps others), with what matchesOwned reads, in batches, when the store can find them
   * without reading every paste; the caller decides each match (paste/owned-search.ts) and
   * stops reading when it has counted enough: `want` matches, which the store may take as a
   * hint not to send many more candidates than that at once. With `bound`, the store stops
   * when its time is up, says how far it got, and ends the batches.
   */
  candidates?(userId: number, filter: OwnedFilter, want?: number, bound?: SearchBound): AsyncIterable<OwnedCandidate[]>;
}

/** A search's time (README, Web pages: My pastes), as OwnerLists.candidates keeps to it. */
export interface SearchBound {
  /** Milliseconds the search may still take; at zero or less it stops. */
  left(): number;
  /** Told once, when the store stopped for want of time: it decided the user's newest `read` of `of` pastes. */
  stopped(read: number, of: number): void;
}

/** A paste a search may match, with the fields the match is decided on. */
export type OwnedCandidate = Pick<Paste, 'hash' | 'title' | 'content_json' | 'language' | 'privacy' | 'encrypted'>;

/** The newest public pastes (store/recent.ts). */
export interface RecentList {
  add(hash: string): void;
  remove(hash: string): void;
  list(): readonly string[];
}

/**
 * What the expiry sweep does to a paste it visits, on every backend (README, Expiry): an
 * expired paste becomes a tombstone (its text, title and password wiped, its revisions gone)
 * that answers 410 for TOMBSTONE_MS, and a tombstone that old is deleted.
 */
export function sweepTxn(
  p: Paste | null,
  now: number,
  released?: (hash: string) => void,
): Txn<'wiped' | 'removed' | null> {
  if (p === null) return { result: null };
  if (isTombstone(p))
    return now >= p.updated_at + TOMBSTONE_MS
      ? { result: 'removed', next: 'delete', dropRevisions: true }
      : { result: null };
  if (!isExpired(p, now)) return { result: null };
  return {
    result: 'wiped',
    next: { ...withoutFiles(p), title: '', content_json: NO_CONTENT, password: null, updated_at: now },
    sweepAt: now + TOMBSTONE_MS,
    dropRevisions: true,
    // Its files went with its text: the file sweep looks at their bytes (paste/files.ts).
    ...(p.files === undefined || released === undefined ? {} : { onCommit: () => released(p.hash) }),
  };
}
