import type { ISql, PendingQuery, Row, Sql } from 'postgres';
import { matchesOwned, type OwnedFilter } from '../paste/owned-search.ts';
import type { OwnedCandidate, OwnerLists, SearchBound } from '../paste/repository.ts';
import { likeTerms, type WalkTerm, walkTerms } from './owned-search-terms.ts';

/**
 * The longest stored text (a JSON literal, in bytes) the trigram index holds
 * (migrations/015-huge-pastes-unindexed.sql, which says the same number): a longer one's
 * trigrams cost its insert too long. Those few are found through `pastes_owner_text_bytes`.
 */
export const INDEXED_TEXT_BYTES = 2_097_152;

/**
 * The bytes of the files each of `userIds`' pastes hold (burned ones left out, and `except`,
 * a paste a write is about to replace), as the quota counts them: the index of migration 18
 * holds only the pastes that have files, so this reads those rows alone. A write adding files
 * counts its owner's in its own transaction (pg/pastes.ts).
 */
export async function fileBytesOf(sql: ISql, userIds: readonly number[], except = ''): Promise<Map<number, number>> {
  const out = new Map<number, number>(userIds.map((id) => [id, 0]));
  const rows = await sql`select p.owner_id, sum((f->>'size')::bigint)::text as bytes
    from pastes p cross join lateral jsonb_array_elements(p.files) f
    where p.owner_id = any(${userIds as number[]}::integer[]) and p.files is not null and not p.burned
      and p.hash <> ${except}
    group by p.owner_id`;
  for (const r of rows) out.set(r['owner_id'] as number, Number(r['bytes']));
  return out;
}

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

  /** Each user's stored file bytes (fileBytesOf). */
  fileBytes(userIds: readonly number[]): Promise<Map<number, number>> {
    return fileBytesOf(this.sql, userIds);
  }

  /** Whether the trigram index of migration 6 is there (it is left out where its extensions could not be made). */
  async wordIndex(): Promise<boolean> {
    return (await this.sql`select 1 from pg_indexes where indexname = 'pastes_owner_words'`).length > 0;
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
   * - when they find more, or PostgreSQL expects them to, the search is broad, and the
   *   owner's pastes are walked newest first a window at a time, PostgreSQL sending the text
   *   only of the rows that may match. A plan of PostgreSQL's own for "newest first, the
   *   first N that may match" would read every candidate and sort them, which is what this
   *   avoids.
   *
   * With `bound`, each query runs with what is left of the search's time as its
   * statement_timeout, and none starts once it is spent: PostgreSQL stops the search, and
   * `bound` hears how many of the user's newest pastes were decided before it did.
   */
  async *candidates(
    userId: number,
    filter: OwnedFilter,
    want?: number,
    bound?: SearchBound,
  ): AsyncGenerator<OwnedCandidate[]> {
    const seen: Progress = { through: undefined };
    try {
      const found = await this.#ask(userId, filter, bound).catch((err: unknown) => {
        // The index's half of the time is up (a plan that reads more than it expected): the walk has the rest.
        if (bound !== undefined && isTimeout(err) && bound.left() > 0) return 'many' as const;
        throw err;
      });
      if (found === 'many') yield* this.#walk(userId, filter, want, bound, seen);
      else yield* this.#read(found, bound, seen);
    } catch (err) {
      if (bound === undefined || !(err instanceof OutOfTime || isTimeout(err))) throw err;
      const [row] = await this.sql`select count(*)::int as of, ${
        seen.through === undefined
          ? this.sql`0`
          : this.sql`count(*) filter (where (created_at, seq) >= (
              ${seen.through.at}::text::timestamptz, ${seen.through.seq}::text::bigint))::int`
      } as read from pastes where owner_id = ${userId}`;
      bound.stopped((row?.['read'] as number | undefined) ?? 0, (row?.['of'] as number | undefined) ?? 0);
    }
  }

  /**
   * `work` on a connection of its own, in a transaction whose statements PostgreSQL ends
   * when the search's time is up; OutOfTime when it is already. Without `bound`, as it is.
   */
  async #timed<T>(bound: SearchBound | undefined, work: (sql: ISql) => Promise<T>): Promise<T> {
    if (bound === undefined) return work(this.sql);
    const left = Math.ceil(bound.left());
    if (left <= 0) throw new OutOfTime();
    return (
      await this.sql.begin(async (tx) => {
        await tx`select set_config('statement_timeout', ${String(left)}, true)`;
        return [await work(tx)];
      })
    )[0] as T;
  }

  /**
   * The hashes of the user's pastes that the indexes say may match, newest first, or 'many'
   * when there are more than `few` of them. PostgreSQL's estimate comes first: when it
   * expects more than READ_PER_FEW times `few` matches, or to read that many rows to find them
   * (words the trigram index cannot narrow), the index is not read at all. Reading it would
   * cost the recheck of every row it gives, on one core, where the walk reads only as far as
   * it must, on two. Below that, the read costs less than a walk whose matches are all old
   * (a word with a language, or with a number, in a user's older pastes). An estimate too low
   * costs only a read that stops at `few` found, and one too high a walk: the answer is the same.
   *
   * Without an order, PostgreSQL reads the index's bitmap in the table's order and stops at
   * the limit. Both are planned for the words of this search: a plan made once for any words
   * would scan the whole trigram index for words it holds no trigram of. With `bound`, they
   * have half of what is left of the search's time: a plan that reads the whole table (words
   * the index holds no trigram of, for a user with much of it) leaves the walk the rest.
   */
  async #ask(userId: number, filter: OwnedFilter, bound: SearchBound | undefined): Promise<string[] | 'many'> {
    const may = this.#mayMatch(filter, 'index');
    const left = bound === undefined ? undefined : Math.ceil(bound.left() / 2);
    if (left !== undefined && left <= 0) throw new OutOfTime();
    return this.sql.begin(async (tx) => {
      if (left !== undefined) await tx`select set_config('statement_timeout', ${String(left)}, true)`;
      await tx`set local plan_cache_mode = force_custom_plan`;
      const [plan] = await tx`explain (format json) select 1 from pastes where owner_id = ${userId} and ${may}`;
      if (estimate(plan) > this.sizes.few * READ_PER_FEW) return 'many' as const;
      const found = await tx`select hash from (
          select hash, created_at, seq from pastes where owner_id = ${userId} and ${may} limit ${this.sizes.few + 1}
        ) x order by created_at desc, seq desc`;
      return found.length > this.sizes.few ? ('many' as const) : found.map((r) => r['hash'] as string);
    });
  }

  /** The rows of `hashes`, in batches, in that order; `seen` is told the last row of each batch. */
  async *#read(hashes: string[], bound: SearchBound | undefined, seen: Progress): AsyncGenerator<OwnedCandidate[]> {
    for (let at = 0, size = this.sizes.window; at < hashes.length; at += size, size = this.#grow(size)) {
      // A paste deleted since it was found is no longer there to match.
      const rows = await this.#timed(
        bound,
        (sql) => sql`select hash, title, content_json, language, privacy, encrypted,
          created_at::text as at, seq::text as seq from pastes
          where hash = any(${hashes.slice(at, at + size)}::text[]) order by created_at desc, seq desc`,
      );
      const last = rows.at(-1);
      if (last !== undefined) seen.through = { at: last['at'] as string, seq: last['seq'] as string };
      yield rows.map(candidate);
    }
  }

  /**
   * The user's pastes that may match, newest first, a window at a time. A window is the rows
   * from the cursor (the last window's far end) to its own far end, found in the owner's index
   * alone, as is its middle. Its two halves are read at once, on two connections, so that
   * PostgreSQL checks them on two cores. Each half is read behind a fence (`offset 0`), so the
   * plan is the owner's index and not the trigram index: the conditions are checked on each
   * row, and only the rows that may match come back, with their text.
   *
   * With `want`, a half sends no more rows than matches are still wanted (the text of a
   * thousand rows costs more to send than to find). A half cut short ends the window at its
   * last row, and what came after it is read again if the walk goes on.
   */
  async *#walk(
    userId: number,
    filter: OwnedFilter,
    want: number | undefined,
    bound: SearchBound | undefined,
    seen: Progress,
  ): AsyncGenerator<OwnedCandidate[], void> {
    const may = this.#mayMatch(filter, 'walk');
    let after: Cursor = { at: 'infinity', seq: '0' };
    let found = 0;
    let walked = 0;
    let least = 1;
    for (let size = this.sizes.window; ; ) {
      const limit = want === undefined ? undefined : Math.max(least, want - found);
      const [middle, end] = await Promise.all([
        this.#timed(bound, (sql) => this.#nth(sql, userId, after, size >> 1)),
        this.#timed(bound, (sql) => this.#nth(sql, userId, after, size)),
      ]);
      const half = (from: Cursor, to: Cursor | undefined) =>
        this.#timed(bound, (sql) => this.#between(sql, userId, may, from, to, limit));
      const halves = await Promise.all(
        middle === undefined ? [half(after, undefined)] : [half(after, middle), half(middle, end)],
      );
      const cut = halves.findIndex((rows) => rows.length === limit);
      const rows = cut === -1 ? halves.flat() : halves.slice(0, cut + 1).flat();
      const batch = rows.map(candidate);
      // Counted as the caller counts: a row may match here and not there (an encrypted
      // paste's envelope is not searched), and those must not stand for wanted matches.
      if (want !== undefined) found += batch.filter((c) => matchesOwned(filter, c)).length;
      const last = rows.at(-1);
      const next = cut !== -1 && last !== undefined ? { at: last['at'] as string, seq: last['seq'] as string } : end;
      // Every paste from the first to `next` is decided once the caller has this batch.
      seen.through = next;
      yield batch;
      if (next === undefined) return;
      after = next;
      // Each window cut short lets the next send twice as many rows, so rows that may match
      // but do not are passed in few steps however many they are.
      if (cut !== -1) least = (limit ?? 1) * 2;
      // The next window grows, but need not hold many more rows than those still wanted
      // would take, at the share of rows that matched so far.
      walked += size;
      const enough =
        limit === undefined || found === 0 ? Number.POSITIVE_INFINITY : ((want ?? 0) - found) * (walked / found);
      size = Math.max(this.sizes.window, Math.min(this.#grow(size), Math.ceil(enough)));
    }
  }

  /**
   * The user's `n`th paste before `after`, newest first, as a cursor: text, since a timestamp read as a Date would lose
   * its microseconds.
   */
  async #nth(sql: ISql, userId: number, after: Cursor, n: number): Promise<Cursor | undefined> {
    const [row] = await sql`select created_at::text as at, seq::text as seq from pastes
      where owner_id = ${userId} and (created_at, seq) < (${after.at}::text::timestamptz, ${after.seq}::text::bigint)
      order by created_at desc, seq desc offset ${n - 1} limit 1`;
    return row === undefined ? undefined : { at: row['at'] as string, seq: row['seq'] as string };
  }

  /**
   * The user's pastes before `after` and from `to` on (or all the rest) that meet `may`, newest first, the first
   * `limit` of them.
   */
  #between(
    sql: ISql,
    userId: number,
    may: PendingQuery<Row[]>,
    after: Cursor,
    to: Cursor | undefined,
    limit: number | undefined,
  ): PendingQuery<Row[]> {
    const from =
      to === undefined ? sql`` : sql`and (created_at, seq) >= (${to.at}::text::timestamptz, ${to.seq}::text::bigint)`;
    return sql`select hash, title, content_json, language, privacy, encrypted, created_at::text as at, seq::text as seq
      from (
        select * from pastes where owner_id = ${userId}
          and (created_at, seq) < (${after.at}::text::timestamptz, ${after.seq}::text::bigint) ${from} offset 0
      ) w where ${may} order by created_at desc, seq desc ${limit === undefined ? sql`` : sql`limit ${limit}`}`;
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
          'like' in t
            ? sql`lower(${sql(column)} collate "C") like ${t.like}`
            : 'exact' in t
              ? sql`${sql(column)} collate "C" like ${t.exact}`
              : sql`${sql(column)} collate "C" ~ ${t.regex}`,
        ),
      );
    // For the index, three arms PostgreSQL reads as one bitmap: each implies the predicate of
    // the partial index it reads (the trigram index, or the larger texts' own).
    const small = sql`octet_length(content_json) <= ${INDEXED_TEXT_BYTES}::int`;
    const found =
      use === 'walk'
        ? sql`((${words('title')}) or (${words('content_json')}))`
        : sql`((${small} and ${words('title')}) or (${small} and ${words('content_json')})
          or (octet_length(content_json) > ${INDEXED_TEXT_BYTES}::int
            and ((${words('title')}) or (${words('content_json')}))))`;
    return and([
      ...(filter.language === undefined ? [] : [sql`language = ${filter.language}`]),
      ...(filter.privacy === undefined ? [] : [sql`privacy = ${filter.privacy}`]),
      ...(terms.length === 0 ? [] : [found]),
    ]);
  }
}

/** How many more rows than `few` PostgreSQL may expect to read for a search before it is walked instead. */
const READ_PER_FEW = 4;

/** A place in a user's pastes, newest first: a paste's `created_at` and `seq`, as text. */
interface Cursor {
  at: string;
  seq: string;
}

/** How far a search has decided the user's pastes, newest first: every one up to `through`, which is a paste. */
interface Progress {
  through: Cursor | undefined;
}

/** A search whose time was spent before its next query. */
class OutOfTime extends Error {}

/** Whether PostgreSQL ended a statement for its statement_timeout (or a cancel): SQLSTATE 57014. */
const isTimeout = (err: unknown): boolean => (err as { code?: unknown } | null)?.code === '57014';

/** A step of a plan in EXPLAIN's JSON. */
interface PlanNode {
  'Plan Rows'?: unknown;
  Plans?: PlanNode[];
}

/**
 * The most rows any step of a plan (EXPLAIN's JSON) expects: what the query gives, or what
 * it reads to give it, when an index narrows nothing (words the trigram index holds no
 * trigram of reach every one of the owner's rows). 0 if the plan says nothing.
 */
function estimate(plan: Row | undefined): number {
  const most = (node: PlanNode | undefined): number =>
    node === undefined
      ? 0
      : Math.max(typeof node['Plan Rows'] === 'number' ? node['Plan Rows'] : 0, ...(node.Plans ?? []).map(most));
  return most((plan?.['QUERY PLAN'] as [{ Plan?: PlanNode }] | undefined)?.[0]?.Plan);
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
