import type { Sql } from 'postgres';
import type { RecentList } from '../paste/repository.ts';

/**
 * The most recently created public pastes, for the home page, as the file store's list
 * (store/recent.ts): held in memory, where `add` and `remove` keep it, and read from the
 * rows by `load` (at start, and whenever the server wants the pastes other servers made).
 * A convenience list as there: readers re-check each paste.
 */
export class PgRecentList implements RecentList {
  #hashes: string[] = [];
  /** While a load's query runs, the changes made meanwhile, to be made again on what it read. */
  #during: (readonly ['add' | 'remove', string])[] | null = null;

  constructor(
    private readonly sql: Sql,
    /** Ten pages of the home page's list (README, Web pages). */
    readonly capacity = 200,
  ) {}

  add(hash: string): void {
    this.#during?.push(['add', hash]);
    this.#hashes = [hash, ...this.#hashes.filter((h) => h !== hash)].slice(0, this.capacity);
  }

  remove(hash: string): void {
    this.#during?.push(['remove', hash]);
    this.#hashes = this.#hashes.filter((h) => h !== hash);
  }

  /** Newest first. */
  list(): readonly string[] {
    return this.#hashes;
  }

  /**
   * The newest public pastes that are not one-time ones (what a create puts on the list),
   * by when they were made: the rows are the list, so no crash leaves it out of date.
   */
  async load(): Promise<void> {
    const during: (readonly ['add' | 'remove', string])[] = [];
    this.#during = during;
    try {
      const rows = await this.sql`select hash from pastes where privacy = 'public' and not burn_after_read
        order by created_at desc, seq desc limit ${this.capacity}`;
      this.#hashes = rows.map((r) => r['hash'] as string);
    } finally {
      if (this.#during === during) this.#during = null;
    }
    for (const [change, hash] of during) this[change](hash);
  }

  /** Nothing to save: the list is read from the rows, which every create has already written. */
  async save(): Promise<void> {}
}
