import type { ViewCounts } from './repository.ts';

/**
 * Views counted since they were last folded into a paste's stored copy: `delta` views beyond
 * a copy that counted `base` (null when not known: a count the data folder saved before it
 * kept bases).
 */
export interface PendingCount {
  base: number | null;
  delta: number;
}

/** The views of `e` that a stored copy counting `stored` does not hold yet. */
export const beyond = (e: PendingCount, stored: number): number =>
  e.base === null ? e.delta : Math.max(0, e.base + e.delta - stored);

/**
 * View counts are batched on both backends (README, Data on disk and durability): a read only
 * bumps a number in memory, and every upkeep tick folds counts into the stored pastes, so a
 * crash loses at most the last tick's. This class is that work, once; each pending count
 * remembers the stored count it started from, so a reader that sees a fold's new total before
 * its count is settled does not count those views twice. The backends differ only in the
 * port below (store/views.ts, pg/views.ts): the data folder folds a few pastes a tick into
 * their files and saves the rest to a state file; PostgreSQL folds all of them into shared
 * rows that several instances add to, tells the others by NOTIFY, and saves nothing else.
 */
export abstract class PendingViews implements ViewCounts {
  readonly #pending = new Map<string, PendingCount>();
  /** Whether the pending counts differ from what `persist` last saved. */
  #dirty = false;
  /** The drain under way: drains run one after another, or two would fold one count twice. */
  #draining: Promise<void> = Promise.resolve();
  /** The save under way: one asked for meanwhile waits for it, so an older list never lands last. */
  #saving: Promise<void> = Promise.resolve();

  /** How many pastes one drain takes at most: each file the data folder folds is a durable write. */
  protected abstract readonly perDrain: number;

  /**
   * Adds each taken count to its paste's stored count, calling `settle` for each paste as its
   * new total becomes visible (with it, or undefined when the paste is gone, burned or damaged).
   */
  protected abstract fold(
    taken: readonly (readonly [string, PendingCount])[],
    settle: (hash: string, stored: number | undefined) => void,
  ): Promise<void>;

  /**
   * Saves what is still pending beside the stored pastes (the data folder's state file), or
   * null where nothing is kept beside them and saving is folding (PostgreSQL). `pending` is
   * the live map: a count made while a save runs may be in it, and marks the counts dirty.
   */
  protected abstract persist(pending: ReadonlyMap<string, PendingCount>): Promise<void> | null;

  /** The newest stored count known of a paste whose copy counts `copy` (PostgreSQL: another fold's, told). */
  protected stored(_hash: string, copy: number): number {
    return copy;
  }

  /** Counts one view of a paste whose copy counts `copy`; answers the views that copy does not hold. */
  add(hash: string, copy: number): number {
    const stored = this.stored(hash, copy);
    let e = this.#pending.get(hash);
    if (e === undefined) {
      e = { base: stored, delta: 0 };
      this.#pending.set(hash, e);
    }
    e.delta++;
    this.#dirty = true;
    return stored - copy + beyond(e, stored);
  }

  /** The views of a paste whose copy counts `copy` that the copy does not hold. */
  pending(hash: string, copy: number): number {
    const stored = this.stored(hash, copy);
    const e = this.#pending.get(hash);
    return stored - copy + (e === undefined ? 0 : beyond(e, stored));
  }

  get size(): number {
    return this.#pending.size;
  }

  /** Takes counts a previous run saved (the data folder), beside any counted since. */
  protected restore(entries: Iterable<readonly [string, PendingCount]>): void {
    for (const [hash, e] of entries) this.#pending.set(hash, e);
  }

  /**
   * Folds up to `perDrain` of the counts pending now into the stored pastes; counts made
   * meanwhile wait for the next drain. A drain asked for while one runs begins when it ends.
   */
  drain(): Promise<void> {
    const run = this.#draining.then(() => this.#drain());
    this.#draining = run.catch(() => undefined);
    return run;
  }

  #drain(): Promise<void> {
    // The first entries, not a copy of all of them: after reads of many pastes, tens of
    // thousands are pending between ticks.
    const taken: (readonly [string, PendingCount])[] = [];
    for (const [hash, e] of this.#pending) {
      if (taken.length === this.perDrain) break;
      taken.push([hash, { ...e }]);
    }
    const deltas = new Map(taken.map(([hash, e]) => [hash, e.delta]));
    return this.fold(taken, (hash, stored) => {
      const e = this.#pending.get(hash);
      const n = deltas.get(hash);
      if (e === undefined || n === undefined) return;
      // What was counted meanwhile stays pending over the paste's new count.
      const left = e.delta - n;
      if (left > 0 && stored !== undefined) {
        e.base = stored;
        e.delta = left;
      } else this.#pending.delete(hash);
      this.#dirty = true;
    });
  }

  /**
   * Saves the pending counts, if they changed (or folds them, where nothing else is kept).
   * Saves run one after another, so a save at shutdown never returns while a tick's is still
   * writing, and the last to finish holds the newest counts.
   */
  save(): Promise<void> {
    const run = this.#saving.then(() => this.#save());
    this.#saving = run.catch(() => undefined);
    return run;
  }

  async #save(): Promise<void> {
    if (!this.#dirty) return;
    this.#dirty = false;
    try {
      const saving = this.persist(this.#pending);
      await (saving ?? this.drain());
    } catch (err) {
      this.#dirty = true;
      throw err;
    }
  }
}
