import { readStateFile, stateJson, type DurableFiles } from './files.ts';
import { KeyedMutex } from './mutex.ts';
import { CorruptPaste } from '../paste/repository.ts';
import type { PasteStore } from './pastes.ts';

/**
 * Views counted since they were last folded into a paste's file: `delta` views beyond a
 * file that counted `base` (null when not known: a count saved by an older version).
 */
interface Pending {
  base: number | null;
  delta: number;
}

/** The views of `e` that a file counting `fileCount` does not hold yet. */
const beyond = (e: Pending, fileCount: number): number =>
  e.base === null ? e.delta : Math.max(0, e.base + e.delta - fileCount);

/**
 * View counts are batched (README, Data on disk and durability): a read only bumps a number
 * in memory; every upkeep tick (5 s) folds some pastes' totals into their files and saves
 * all that is still pending to one state file, so a crash loses at most the last tick's
 * counts. Each pending count remembers the file's count it started from, so a count both
 * saved and then folded before a crash is recognised in the file at the next start and
 * never counted twice; loading the saved counts removes nothing until they are folded or
 * saved again.
 */
export class ViewCounter {
  readonly #pending = new Map<string, Pending>();
  /** Whether the pending counts differ from what the state file holds. */
  #dirty = false;
  /** Saves, one at a time (the one key): each waits for the one before. */
  readonly #saves = new KeyedMutex();

  constructor(
    private readonly store: PasteStore,
    private readonly files: DurableFiles,
    private readonly file: string,
  ) {}

  /** Counts one view of a paste whose file counts `fileCount`; answers the views it does not hold yet. */
  add(hash: string, fileCount: number): number {
    let e = this.#pending.get(hash);
    if (e === undefined) {
      e = { base: fileCount, delta: 0 };
      this.#pending.set(hash, e);
    }
    e.delta++;
    this.#dirty = true;
    return beyond(e, fileCount);
  }

  /** The views of a paste whose file counts `fileCount` that the file does not hold yet. */
  pending(hash: string, fileCount: number): number {
    const e = this.#pending.get(hash);
    return e === undefined ? 0 : beyond(e, fileCount);
  }

  get size(): number {
    return this.#pending.size;
  }

  /**
   * Writes up to `max` pastes' pending counts into their files. Each is a durable write, so
   * the batch is kept small: read-heavy load must not turn into a stream of fsyncs.
   */
  async drain(max = 100): Promise<void> {
    // The first `max` entries, not a copy of all of them: after reads of many pastes, tens
    // of thousands are pending between ticks.
    const batch: (readonly [string, Pending])[] = [];
    for (const [hash, e] of this.#pending) {
      if (batch.length === max) break;
      batch.push([hash, { ...e }]);
    }
    for (const [hash, taken] of batch) {
      await this.#fold(hash, taken).catch((err: unknown) => {
        // A damaged paste file cannot take its count: drop it, and drain the others.
        if (!(err instanceof CorruptPaste)) throw err;
        this.#pending.delete(hash);
        this.#dirty = true;
      });
    }
  }

  /** Folds one paste's pending count into its file, settling the count in the same step. */
  #fold(hash: string, taken: Pending): Promise<void> {
    return this.store.transact(hash, (p) => {
      const add = p === null || p.burned ? 0 : beyond(taken, p.view_count);
      return {
        result: undefined,
        ...(p !== null && add > 0 ? { next: { ...p, view_count: p.view_count + add } } : {}),
        // Settle in the same step that makes the new total visible, so no reader counts it twice.
        onCommit: () => {
          const e = this.#pending.get(hash);
          if (e === undefined) return;
          const left = e.delta - taken.delta;
          if (left > 0 && p !== null && !p.burned) {
            e.base = p.view_count + add;
            e.delta = left;
          } else this.#pending.delete(hash);
          this.#dirty = true;
        },
      };
    });
  }

  /** Takes the counts a previous run saved. The file stays until the next save replaces it. */
  async load(): Promise<void> {
    const saved = await readStateFile(this.file);
    if (typeof saved !== 'object' || saved === null) return;
    const v2 = (saved as { v?: unknown }).v === 2;
    const entries = v2 ? (saved as { pending?: unknown }).pending : saved;
    if (typeof entries !== 'object' || entries === null) return;
    for (const [hash, value] of Object.entries(entries)) {
      // Version 2: [base, delta]; before it, the delta alone (never folded, so all of it counts).
      const [base, delta] = v2 && Array.isArray(value) ? (value as unknown[]) : [null, value];
      if (!Number.isInteger(delta) || (delta as number) <= 0) continue;
      if (base !== null && !Number.isInteger(base)) continue;
      this.#pending.set(hash, { base: base as number | null, delta: delta as number });
    }
  }

  /**
   * Saves the pending counts durably (or removes the file when none are left), if they
   * changed. Saves run one after another: one called while another is writing waits for
   * it, so the last to finish holds the newest counts, and a save at shutdown never
   * returns while a tick's save is still under way.
   */
  save(): Promise<void> {
    return this.#saves.run('save', () => this.#save());
  }

  async #save(): Promise<void> {
    if (!this.#dirty) return;
    this.#dirty = false;
    if (this.#pending.size === 0) {
      await this.files.removeFile(this.file);
      return;
    }
    try {
      await this.files.writeFile(this.file, await this.#serialised());
    } catch (err) {
      this.#dirty = true;
      throw err;
    }
  }

  /**
   * The pending counts as the state file's text, `{"v":2,"pending":{hash: [base, delta]}}`,
   * a chunk at a time (stateJson): after reads of many pastes as many counts are
   * pending, and writing them in one go held every request on each tick. A
   * count that changes while this runs marks the counts dirty again, so the next save has
   * it, as with one written in one go.
   */
  async #serialised(): Promise<string> {
    return `{"v":2,"pending":${await stateJson(this.#pending, (e) => [e.base, e.delta])}}`;
  }
}
