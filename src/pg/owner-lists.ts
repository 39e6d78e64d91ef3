import type { Sql } from 'postgres';
import type { OwnedFilter } from '../paste/owned-search.ts';
import type { OwnedCandidate, OwnerLists } from '../paste/repository.ts';
import { likeTerms } from './owned-search-terms.ts';

/**
 * Each user's pastes, as a query on `pastes` (by the owner's index). The file store keeps a
 * list per user beside the pastes (store/owner-index.ts) because a folder cannot be asked
 * whose files are whose; here the rows say it, so there is no list to write.
 */
export class PgOwnerLists implements OwnerLists {
  constructor(private readonly sql: Sql) {}

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
   * The user's pastes that may match: the language and privacy compared here, and each
   * plain-ASCII run of the words looked for in the title or the stored text
   * (owned-search-terms.ts), by the trigram index of migration 6 where it could be made.
   */
  async candidates(userId: number, filter: OwnedFilter): Promise<OwnedCandidate[]> {
    const none = this.sql``;
    const terms = filter.text === undefined ? [] : likeTerms(filter.text);
    const all = (column: 'title' | 'content_json') =>
      terms.reduce(
        (acc, t, i) =>
          i === 0
            ? this.sql`lower(${this.sql(column)} collate "C") like ${t}`
            : this.sql`${acc} and lower(${this.sql(column)} collate "C") like ${t}`,
        none,
      );
    const rows = await this.sql`select hash, title, content_json, language, privacy, encrypted from pastes
      where owner_id = ${userId}
      ${filter.language === undefined ? none : this.sql`and language = ${filter.language}`}
      ${filter.privacy === undefined ? none : this.sql`and privacy = ${filter.privacy}`}
      ${terms.length === 0 ? none : this.sql`and ((${all('title')}) or (${all('content_json')}))`}
      order by created_at desc, seq desc`;
    return rows.map((r) => ({
      hash: r['hash'] as string,
      title: r['title'] as string,
      content_json: r['content_json'] as string,
      language: r['language'] as string,
      privacy: r['privacy'] as OwnedCandidate['privacy'],
      ...(r['encrypted'] === true ? { encrypted: 1 as const } : {}),
    }));
  }
}
