import type { Sql } from 'postgres';
import type { ViewCounts } from '../paste/repository.ts';
import { PASTES_CHANNEL } from './paste-cache.ts';

/** Views counted since they were last folded in: `delta` views beyond a row that counted `base`. */
interface Pending {
  base: number;
  delta: number;
}

/** The views of `e` that a row counting `rowCount` does not hold yet. */
const beyond = (e: Pending, rowCount: number): number => Math.max(0, e.base + e.delta - rowCount);

/** Pastes one announcement of a fold names at most: well within a notification's 8000 bytes. */
const ANNOUNCED_PER_NOTIFICATION = 250;

/**
 * The announcements of folded counts (migration 10), each "+" and then "<hash> <count>"
 * pairs, space separated; pg/paste-cache.ts reads them. A hash holds no space, and a server
 * of the version before takes one for a paste it does not hold, and ignores it.
 */
export function foldAnnouncements(counts: readonly (readonly [string, number])[]): string[] {
  const out: string[] = [];
  for (let at = 0; at < counts.length; at += ANNOUNCED_PER_NOTIFICATION)
    out.push(
      `+${counts
        .slice(at, at + ANNOUNCED_PER_NOTIFICATION)
        .map(([hash, n]) => `${hash} ${n}`)
        .join(' ')}`,
    );
  return out;
}

/** Pastes whose counts one statement folds in. */
const FOLD_CHUNK = 1_000;

/**
 * View counts are batched as the file store batches them (store/views.ts, README Data on
 * disk and durability): a read only bumps a number in memory, and every upkeep tick folds
 * all of them into their rows (`view_count = view_count + n`), a thousand pastes a
 * statement, so a crash loses at most the last tick's counts. Nothing is saved beside the
 * rows, so no count can be both saved and folded: a fold adds what was counted, whatever
 * the row holds, and another server's folds into the same row add up with ours. Each pending
 * count remembers the row's count it started from, so a reader that sees the row just
 * after a fold, before the count is settled, does not count those views twice.
 */
export class PgViewCounts implements ViewCounts {
  readonly #pending = new Map<string, Pending>();
  /** The drain under way, if any: drains run one after another, or two would fold one count twice. */
  #draining: Promise<void> = Promise.resolve();

  constructor(
    private readonly sql: Sql,
    /** Told of each paste's new count as its fold commits, at once: a cached copy would show fewer views. */
    private readonly folded: (hash: string, viewCount: number) => void = () => undefined,
  ) {}

  /** Counts one view of a paste whose row counts `rowCount`; answers the views it does not hold yet. */
  add(hash: string, rowCount: number): number {
    let e = this.#pending.get(hash);
    if (e === undefined) {
      e = { base: rowCount, delta: 0 };
      this.#pending.set(hash, e);
    }
    e.delta++;
    return beyond(e, rowCount);
  }

  /** The views of a paste whose row counts `rowCount` that the row does not hold yet. */
  pending(hash: string, rowCount: number): number {
    const e = this.#pending.get(hash);
    return e === undefined ? 0 : beyond(e, rowCount);
  }

  get size(): number {
    return this.#pending.size;
  }

  /**
   * Folds every count pending now into its row; counts made meanwhile wait for the next
   * drain. A drain asked for while one runs begins when it ends.
   */
  drain(): Promise<void> {
    const run = this.#draining.then(() => this.#drainAll());
    this.#draining = run.catch(() => undefined);
    return run;
  }

  /** Nothing is kept beside the rows: saving is folding what is pending (at shutdown too). */
  save(): Promise<void> {
    return this.drain();
  }

  async #drainAll(): Promise<void> {
    const taken = [...this.#pending].map(([hash, e]) => [hash, e.delta] as const);
    for (let at = 0; at < taken.length; at += FOLD_CHUNK) await this.#fold(taken.slice(at, at + FOLD_CHUNK));
  }

  /**
   * Adds each paste's taken views to its row in one statement, then settles them: what was
   * counted meanwhile stays pending over the row's new count. A paste gone or burned takes
   * none (a burned paste's count stopped at its one reading), and its count is dropped.
   */
  async #fold(taken: (readonly [string, number])[]): Promise<void> {
    const hashes = taken.map(([hash]) => hash);
    const counts = taken.map(([, n]) => n);
    const rows = await this.sql.begin(async (tx) => {
      // Says to the announcing trigger (migrations 7 and 10) that only the counts change, and
      // that this fold announces them itself: the servers' caches take the new counts
      // instead of dropping the pastes.
      await tx`select set_config('pastebin.view_fold', 'batched', true)`;
      // The rows are locked in hash order first: two servers folding the same pastes cannot deadlock.
      const folded = await tx`
        with v as (select * from unnest(${hashes}::text[], ${counts}::bigint[]) as v(hash, n)),
        locked as (select p.hash from pastes p join v using (hash) where not p.burned order by p.hash for update of p)
        update pastes p set view_count = p.view_count + v.n
        from v join locked using (hash)
        where p.hash = v.hash and not p.burned
        returning p.hash, p.view_count::float8 as view_count`;
      // Sent at commit, with it, as the trigger's would be.
      const payloads = foldAnnouncements(folded.map((r) => [r['hash'] as string, r['view_count'] as number]));
      if (payloads.length > 0) await tx`select pg_notify(${PASTES_CHANNEL}, p) from unnest(${payloads}::text[]) as p`;
      return folded;
    });
    const now = new Map(rows.map((r) => [r['hash'] as string, r['view_count'] as number]));
    for (const [hash, count] of now) this.folded(hash, count);
    for (const [hash, n] of taken) {
      const e = this.#pending.get(hash);
      if (e === undefined) continue;
      const rowCount = now.get(hash);
      const left = e.delta - n;
      if (left > 0 && rowCount !== undefined) {
        e.base = rowCount;
        e.delta = left;
      } else this.#pending.delete(hash);
    }
  }
}
