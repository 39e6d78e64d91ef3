import type { Sql } from 'postgres';
import type { OwnerLists } from '../paste/repository.ts';

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

  async count(userId: number): Promise<number> {
    const [row] = await this.sql`select count(*)::int as n from pastes where owner_id = ${userId}`;
    return (row?.['n'] as number | undefined) ?? 0;
  }
}
