import type { ISql, PendingQuery, Row, Sql } from 'postgres';
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

/**
 * The newest count of each paste's row, kept where its copy is kept (pg/paste-cache.ts): a
 * copy stays as it was read, and the count its row reached since is told beside it.
 */
export interface FoldedCounts {
  /** A fold gave the paste's row this count, at once as it commits (its announcement comes later). */
  recount(hash: string, viewCount: number): void;
  /** The newest count told of the paste's row, if known. */
  viewCount(hash: string): number | undefined;
}

/** Nothing cached: each copy is read from its row, and holds its count. */
const NOWHERE: FoldedCounts = { recount: () => undefined, viewCount: () => undefined };

/** A folded row's whole count, as `view_count`: its views and its paste's row's own (migrations/014-paste-views.sql). */
const total = (sql: ISql): PendingQuery<Row[]> =>
  sql`(pv.views + coalesce((select p.view_count from pastes p where p.hash = pv.hash), 0))::float8 as view_count`;

/** Pastes whose counts one statement folds in. */
const FOLD_CHUNK = 1_000;

/**
 * View counts are batched as the file store batches them (store/views.ts, README Data on
 * disk and durability): a read only bumps a number in memory, and every upkeep tick folds
 * all of them into the pastes' rows of `paste_views` (`views = views + n`, beside `pastes`,
 * whose wide rows a fold would otherwise write anew: migrations/014-paste-views.sql), a
 * thousand pastes a statement, so a crash loses at most the last tick's counts. Nothing else
 * is saved, so no count can be both saved and folded: a fold adds what was counted, whatever
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
    /** Where folded counts are told and found again: the paste cache (pg/pastes.ts). */
    private readonly rows: FoldedCounts = NOWHERE,
  ) {}

  /**
   * Counts one view of a paste whose copy counts `rowCount`; answers the views that copy
   * does not hold: those folded into its row since it was read, and those still pending.
   */
  add(hash: string, rowCount: number): number {
    const row = this.#rowCount(hash, rowCount);
    let e = this.#pending.get(hash);
    if (e === undefined) {
      e = { base: row, delta: 0 };
      this.#pending.set(hash, e);
    }
    e.delta++;
    return row - rowCount + beyond(e, row);
  }

  /** The views of a paste whose copy counts `rowCount` that the copy does not hold. */
  pending(hash: string, rowCount: number): number {
    const row = this.#rowCount(hash, rowCount);
    const e = this.#pending.get(hash);
    return row - rowCount + (e === undefined ? 0 : beyond(e, row));
  }

  /** The newest count of the row known: the copy's, or one a fold told of since (counts only grow). */
  #rowCount(hash: string, rowCount: number): number {
    const told = this.rows.viewCount(hash);
    return told !== undefined && told > rowCount ? told : rowCount;
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
   * Adds each paste's taken views to its row of `paste_views` in one statement, then settles
   * them: what was counted meanwhile stays pending over the paste's new count. A paste gone or
   * burned has no row there (migrations/014-paste-views.sql) and takes none (a burned paste's
   * count stopped at its one reading), and its count is dropped.
   */
  async #fold(taken: (readonly [string, number])[]): Promise<void> {
    const hashes = taken.map(([hash]) => hash);
    const counts = taken.map(([, n]) => n);
    const rows = await this.sql.begin(async (tx) => {
      // The rows are locked in hash order first: two servers folding the same pastes cannot
      // deadlock. The paste's own row is only read, for the count the fold makes.
      const folded = await tx`
        with v as (select * from unnest(${hashes}::text[], ${counts}::bigint[]) as v(hash, n)),
        locked as (select pv.hash from paste_views pv join v using (hash) order by pv.hash for update of pv)
        update paste_views pv set views = pv.views + v.n
        from v join locked using (hash)
        where pv.hash = v.hash
        returning pv.hash, ${total(tx)}`;
      if (folded.length < taken.length) {
        // A paste's first fold makes its row of views. Its row of `pastes` is held meanwhile
        // (KEY SHARE), so it cannot be deleted or burned before its row of views is made: a
        // delete then takes that row too, and a burn its views.
        const done = new Set(folded.map((r) => r['hash'] as string));
        const first = taken.filter(([hash]) => !done.has(hash));
        const made = await tx`
          insert into paste_views as pv (hash, views)
          select p.hash, v.n from unnest(${first.map(([hash]) => hash)}::text[], ${first.map(([, n]) => n)}::bigint[]) as v(hash, n)
            join pastes p using (hash) where not p.burned order by p.hash for key share of p
          on conflict (hash) do update set views = pv.views + excluded.views
          returning pv.hash, ${total(tx)}`;
        folded.push(...made);
      }
      // Sent at commit, with it: no trigger announces these rows.
      const payloads = foldAnnouncements(folded.map((r) => [r['hash'] as string, r['view_count'] as number]));
      if (payloads.length > 0) await tx`select pg_notify(${PASTES_CHANNEL}, p) from unnest(${payloads}::text[]) as p`;
      return folded;
    });
    const now = new Map(rows.map((r) => [r['hash'] as string, r['view_count'] as number]));
    for (const [hash, count] of now) this.rows.recount(hash, count);
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
