import { type PendingCount, PendingViews, beyond } from '../paste/pending-views.ts';
import { CorruptPaste } from '../paste/repository.ts';
import { readStateFile, stateJson, type DurableFiles } from './files.ts';
import type { PasteStore } from './pastes.ts';

/**
 * Pastes one upkeep tick folds into their files: each is a durable write, so read-heavy load is not a stream of fsyncs.
 */
const FOLDS_PER_TICK = 100;

/**
 * The data folder's port of the pending view counts (paste/pending-views.ts holds the
 * counting): each tick folds a few pastes' counts into their files and saves all that is
 * still pending to one state file, so a crash loses at most the last tick's counts. A count
 * both saved and then folded before a crash is recognised in the file at the next start by
 * its base and never counted twice; loading the saved counts removes nothing until they are
 * folded or saved again.
 */
export class ViewCounter extends PendingViews {
  protected readonly perDrain = FOLDS_PER_TICK;

  constructor(
    private readonly store: PasteStore,
    private readonly files: DurableFiles,
    private readonly file: string,
  ) {
    super();
  }

  /** Folds each paste's count into its file, settling it in the same step that makes the new total visible. */
  protected async fold(
    taken: readonly (readonly [string, PendingCount])[],
    settle: (hash: string, stored: number | undefined) => void,
  ): Promise<void> {
    for (const [hash, e] of taken) {
      await this.store
        .transact(hash, (p) => {
          const add = p === null || p.burned ? 0 : beyond(e, p.view_count);
          return {
            result: undefined,
            ...(p !== null && add > 0 ? { next: { ...p, view_count: p.view_count + add } } : {}),
            onCommit: () => settle(hash, p === null || p.burned ? undefined : p.view_count + add),
          };
        })
        .catch((err: unknown) => {
          // A damaged paste file cannot take its count: drop it, and fold the others.
          if (!(err instanceof CorruptPaste)) throw err;
          settle(hash, undefined);
        });
    }
  }

  /** Takes the counts a previous run saved. The file stays until the next save replaces it. */
  async load(): Promise<void> {
    const saved = await readStateFile(this.file);
    if (typeof saved !== 'object' || saved === null) return;
    const v2 = (saved as { v?: unknown }).v === 2;
    const entries = v2 ? (saved as { pending?: unknown }).pending : saved;
    if (typeof entries !== 'object' || entries === null) return;
    const read: [string, PendingCount][] = [];
    for (const [hash, value] of Object.entries(entries)) {
      // Version 2: [base, delta]; before it, the delta alone (never folded, so all of it counts).
      const [base, delta] = v2 && Array.isArray(value) ? (value as unknown[]) : [null, value];
      if (!Number.isInteger(delta) || (delta as number) <= 0) continue;
      if (base !== null && !Number.isInteger(base)) continue;
      read.push([hash, { base: base as number | null, delta: delta as number }]);
    }
    this.restore(read);
  }

  /**
   * Writes the pending counts durably (or removes the file when none are left) as
   * `{"v":2,"pending":{hash: [base, delta]}}`, a chunk at a time (stateJson): after reads of
   * many pastes as many counts are pending, and writing them in one go held every request.
   */
  protected async persist(pending: ReadonlyMap<string, PendingCount>): Promise<void> {
    if (pending.size === 0) {
      await this.files.removeFile(this.file);
      return;
    }
    const text = `{"v":2,"pending":${await stateJson(pending, (e) => [e.base, e.delta])}}`;
    await this.files.writeFile(this.file, text);
  }
}
