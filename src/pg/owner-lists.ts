import type { PendingQuery, Row, Sql } from 'postgres';
import type { OwnedFilter } from '../paste/owned-search.ts';
import type { OwnedCandidate, OwnerLists } from '../paste/repository.ts';
import { likeTerms, type WalkTerm, walkTerms } from './owned-search-terms.ts';

/**
 * Each user's pastes, as a query on `pastes` (by the owner's index). The file store keeps a
 * list per user beside the pastes (store/owner-index.ts) because a folder cannot be asked
 * whose files are whose; here the rows say it, so there is no list to write.
 */
export class PgOwnerLists implements OwnerLists {
  constructor(
    private readonly sql: Sql,
    /** How many candidates the index may find for them to be read at once, and the first window of a broad search. */
    private readonly sizes: { few: number; window: number } = { few: 4_000, window: 1_000 },
  ) {}

  /**
   * Nothing to write: the paste's row, inserted by the create this belongs to, is its
   * entry, and it is there exactly when the paste is (a create the database refused left
   * neither, so nothing is left to mend after a crash either).
   */
  async add(_userId: number, _hash: string): Promise<void> {}

  /** Nothing to write: the paste's entry went with its row. */
  async remove(_userId: number, _hash: string): Promise<void> {}

  /**
   * The user's paste hashes, newest first, as the file store lists them: by when each was
   * made, and those made in the same millisecond in the order they were made (`seq`).
   */
  async list(userId: number): Promise<string[]> {
    const rows = await this.sql`select hash from pastes where owner_id = ${userId}
      order by created_at desc, seq desc`;
    return rows.map((r) => r['hash'] as string);
  }

  /** One page of `list`, read from the owner's index without the rest of the list. */
  async slice(userId: number, offset: number, limit: number): Promise<string[]> {
    const rows = await this.sql`select hash from pastes where owner_id = ${userId}
      order by created_at desc, seq desc offset ${offset} limit ${limit}`;
    return rows.map((r) => r['hash'] as string);
  }

  async count(userId: number): Promise<number> {
    const [row] = await this.sql`select count(*)::int as n from pastes where owner_id = ${userId}`;
    return (row?.['n'] as number | undefined) ?? 0;
  }

  /** Every user's count in one pass over the owner's index, rather than one query per user. */
  async counts(userIds: readonly number[]): Promise<Map<number, number>> {
    const out = new Map<number, number>(userIds.map((id) => [id, 0]));
    const rows = await this.sql`select owner_id, count(*)::int as n from pastes
      where owner_id = any(${userIds as number[]}::integer[]) group by owner_id`;
    for (const r of rows) out.set(r['owner_id'] as number, r['n'] as number);
    return out;
  }

  /**
   * The user's pastes that may match, newest first, in batches: the language and privacy
   * compared here (by the index of migration 11), and the runs of the words looked for that
   * are stored as they are (owned-search-terms.ts) in the title or the stored text (by the
   * trigram index of migration 6, where it could be made). The caller stops reading when it
   * has counted enough (paste/service.ts, OWNED_COUNT_LIMIT), so neither way below reads a
   * text it will not need:
   *
   * - when the indexes find at most `few` of them, their hashes come at once, sorted here,
   *   and their rows follow in batches;
   * - when they find more, the search is broad, and the owner's pastes are walked newest
   *   first a window at a time, PostgreSQL sending the text only of the rows that may match.
   *   A plan of PostgreSQL's own for "newest first, the first N that may match" would read
   *   every candidate and sort them, which is what this avoids.
   */
  async *candidates(userId: number, filter: OwnedFilter): AsyncGenerator<OwnedCandidate[]> {
    const probe = this.#mayMatch(filter, 'index');
    // Without an order, PostgreSQL reads the index's bitmap in the table's order and stops at
    // the limit. It is planned for the words of this search: a plan made once for any words
    // would scan the whole trigram index for words it holds no trigram of.
    const found = await this.sql.begin(async (tx) => {
      await tx`set local plan_cache_mode = force_custom_plan`;
      return tx`select hash from (
          select hash, created_at, seq from pastes where owner_id = ${userId} and ${probe} limit ${this.sizes.few + 1}
        ) x order by created_at desc, seq desc`;
    });
    if (found.length <= this.sizes.few) {
      const hashes = found.map((r) => r['hash'] as string);
      for (let at = 0, size = this.sizes.window; at < hashes.length; at += size, size = this.#grow(size)) {
        // A paste deleted since it was found is no longer there to match.
        const rows = await this.sql`select hash, title, content_json, language, privacy, encrypted from pastes
          where hash = any(${hashes.slice(at, at + size)}::text[]) order by created_at desc, seq desc`;
        yield rows.map(candidate);
      }
      return;
    }
    // A window is the rows from the cursor (the last window's far end, as text: a timestamp
    // read as a Date would lose its microseconds) to its own far end, found in the owner's
    // index alone. Its rows are read behind a fence (`offset 0`), so the plan is the owner's
    // index and not the trigram index: the conditions are checked on each row, and only the
    // rows that may match come back, with their text.
    const may = this.#mayMatch(filter, 'walk');
    let after: { at: string; seq: string } = { at: 'infinity', seq: '0' };
    for (let size = this.sizes.window; ; size = this.#grow(size)) {
      const before = this.sql`(created_at, seq) < (${after.at}::text::timestamptz, ${after.seq}::text::bigint)`;
      const [end] = await this.sql`select created_at::text as at, seq::text as seq from pastes
        where owner_id = ${userId} and ${before}
        order by created_at desc, seq desc offset ${size - 1} limit 1`;
      const from =
        end === undefined
          ? this.sql``
          : this
              .sql`and (created_at, seq) >= (${end['at'] as string}::text::timestamptz, ${end['seq'] as string}::text::bigint)`;
      const rows = await this.sql`select hash, title, content_json, language, privacy, encrypted from (
          select * from pastes where owner_id = ${userId} and ${before} ${from} offset 0
        ) w where ${may} order by created_at desc, seq desc`;
      yield rows.map(candidate);
      if (end === undefined) return;
      after = { at: end['at'] as string, seq: end['seq'] as string };
    }
  }

  #grow(size: number): number {
    return Math.min(size * 2, this.sizes.window * 8);
  }

  /**
   * The SQL condition every row that matches `filter` meets (and perhaps others): for the
   * index, its words as likeTerms gives them, on the lower() the trigram index holds; for the
   * walk, as walkTerms gives them, stricter where a word has letters with case outside ASCII
   * (owned-search-terms.ts).
   */
  #mayMatch(filter: OwnedFilter, use: 'index' | 'walk'): PendingQuery<Row[]> {
    const sql = this.sql;
    const and = (conditions: PendingQuery<Row[]>[]) =>
      conditions.reduce((acc, c, i) => (i === 0 ? c : sql`${acc} and ${c}`), sql`true`);
    const terms: WalkTerm[] =
      filter.text === undefined
        ? []
        : use === 'index'
          ? likeTerms(filter.text).map((like) => ({ like }))
          : walkTerms(filter.text);
    const words = (column: 'title' | 'content_json') =>
      and(
        terms.map((t) =>
          'like' in t ? sql`lower(${sql(column)} collate "C") like ${t.like}` : sql`${sql(column)} ~ ${t.regex}`,
        ),
      );
    return and([
      ...(filter.language === undefined ? [] : [sql`language = ${filter.language}`]),
      ...(filter.privacy === undefined ? [] : [sql`privacy = ${filter.privacy}`]),
      ...(terms.length === 0 ? [] : [sql`((${words('title')}) or (${words('content_json')}))`]),
    ]);
  }
}

/** A row of `pastes` as the search reads it. */
function candidate(r: Row): OwnedCandidate {
  return {
    hash: r['hash'] as string,
    title: r['title'] as string,
    content_json: r['content_json'] as string,
    language: r['language'] as string,
    privacy: r['privacy'] as OwnedCandidate['privacy'],
    ...(r['encrypted'] === true ? { encrypted: 1 as const } : {}),
  };
}
