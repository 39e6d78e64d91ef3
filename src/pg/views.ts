import type { ISql, PendingQuery, Row, Sql } from 'postgres';
import { type PendingCount, PendingViews } from '../paste/pending-views.ts';
import { PASTES_CHANNEL } from './paste-cache.ts';

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

/**
 * A folded row's whole count, as `view_count`: its views and its paste's row's own (migrations/014-paste-views.sql).
 */
const total = (sql: ISql): PendingQuery<Row[]> =>
  sql`(pv.views + coalesce((select p.view_count from pastes p where p.hash = pv.hash), 0))::float8 as view_count`;

/** Pastes whose counts one statement folds in. */
const FOLD_CHUNK = 1_000;

/**
 * PostgreSQL's port of the pending view counts (paste/pending-views.ts holds the counting):
 * every tick folds all of them into the pastes' rows of `paste_views` (`views = views + n`,
 * beside `pastes`, whose wide rows a fold would otherwise write anew:
 * migrations/014-paste-views.sql), a thousand pastes a statement. Unlike the data folder,
 * nothing else is saved, so no count can be both saved and folded: a fold adds what was
 * counted, whatever the row holds, another server's folds into the same row add up with ours,
 * and each fold is announced (NOTIFY) so the others' copies learn the row's new count.
 */
export class PgViewCounts extends PendingViews {
  protected readonly perDrain = Number.POSITIVE_INFINITY;

  constructor(
    private readonly sql: Sql,
    /** Where folded counts are told and found again: the paste cache (pg/pastes.ts). */
    private readonly rows: FoldedCounts = NOWHERE,
  ) {
    super();
  }

  /** The newest count of the row known: the copy's, or one a fold told of since (counts only grow). */
  protected override stored(hash: string, copy: number): number {
    const told = this.rows.viewCount(hash);
    return told !== undefined && told > copy ? told : copy;
  }

  /** Nothing is kept beside the rows: saving is folding what is pending (at shutdown too). */
  protected persist(): null {
    return null;
  }

  protected async fold(
    taken: readonly (readonly [string, PendingCount])[],
    settle: (hash: string, stored: number | undefined) => void,
  ): Promise<void> {
    for (let at = 0; at < taken.length; at += FOLD_CHUNK) {
      const chunk = taken.slice(at, at + FOLD_CHUNK).map(([hash, e]) => [hash, e.delta] as const);
      const now = await this.#fold(chunk);
      for (const [hash] of chunk) settle(hash, now.get(hash));
    }
  }

  /**
   * Adds each paste's taken views to its row of `paste_views` in one statement, and answers
   * the rows' new counts. A paste gone or burned has no row there
   * (migrations/014-paste-views.sql) and takes none (a burned paste's count stopped at its one
   * reading), and is not in the answer.
   */
  async #fold(taken: (readonly [string, number])[]): Promise<Map<string, number>> {
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
          select p.hash, v.n
            from unnest(${first.map(([hash]) => hash)}::text[], ${first.map(([, n]) => n)}::bigint[]) as v(hash, n)
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
    return now;
  }
}
