import { readStateFile, type DurableFiles } from './files.ts';
import type { PasteStore } from './pastes.ts';

/**
 * View counts are batched: a read only bumps a number in memory, and a background drain
 * folds the totals into the paste files a few hundred at a time. On shutdown whatever is
 * still pending is saved to one file and picked up at the next start, so a graceful
 * restart loses nothing and a crash loses at most the last few seconds of counts.
 */
export class ViewCounter {
  readonly #pending = new Map<string, number>();

  constructor(
    private readonly store: PasteStore,
    private readonly files: DurableFiles,
    private readonly file: string,
  ) {}

  /** Counts one view; answers the views now pending for this paste. */
  add(hash: string): number {
    const n = (this.#pending.get(hash) ?? 0) + 1;
    this.#pending.set(hash, n);
    return n;
  }

  pending(hash: string): number {
    return this.#pending.get(hash) ?? 0;
  }

  get size(): number {
    return this.#pending.size;
  }

  /**
   * Writes up to `max` pastes' pending counts into their files. Each is a durable write, so
   * the batch is kept small: read-heavy load must not turn into a stream of fsyncs.
   */
  async drain(max = 100): Promise<void> {
    const batch = [...this.#pending].slice(0, max);
    for (const [hash, delta] of batch) {
      await this.store.transact(hash, (p) => ({
        result: undefined,
        ...(p !== null && !p.burned ? { next: { ...p, view_count: p.view_count + delta } } : {}),
        // Subtract in the same step that makes the new total visible, so no reader counts it twice.
        onCommit: () => {
          const left = (this.#pending.get(hash) ?? 0) - delta;
          if (left > 0 && p !== null) this.#pending.set(hash, left);
          else this.#pending.delete(hash);
        },
      }));
    }
  }

  /** Takes the counts a previous run saved; the file is removed so they count once. */
  async load(): Promise<void> {
    const saved = await readStateFile(this.file);
    for (const [hash, n] of Object.entries(typeof saved === 'object' && saved !== null ? saved : {})) {
      if (Number.isInteger(n) && n > 0) this.#pending.set(hash, this.pending(hash) + n);
    }
    await this.files.removeFile(this.file);
  }

  async save(): Promise<void> {
    if (this.#pending.size === 0) return;
    await this.files.writeFile(this.file, JSON.stringify(Object.fromEntries(this.#pending)));
  }
}
