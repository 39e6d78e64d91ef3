import type { Sql } from 'postgres';
import { DatabaseStartError } from './connect.ts';
import { loadMigrations, type Migration } from './migrations.ts';

/**
 * The advisory lock every instance takes to migrate (transaction-scoped, so a crash releases
 * it): instances starting together apply the pending migrations once, one after the other
 * finding nothing left to do. Any constant works; this one spells "pastebin" in ASCII.
 */
export const MIGRATION_LOCK = 0x7061_7374_6562_696en;

export interface Migrated {
  /** The schema's version before and after. */
  from: number;
  to: number;
  /** The migrations this call applied (none when another instance had). */
  applied: Migration[];
}

/**
 * Brings the schema up to date in ONE transaction under MIGRATION_LOCK, recording each
 * migration in `schema_migrations`: either all pending ones are applied or none is. A schema
 * newer than the files known is refused, as a newer `format.json` is.
 */
export async function migrate(sql: Sql, migrations?: readonly Migration[]): Promise<Migrated> {
  const known = migrations ?? (await loadMigrations());
  const latest = known.at(-1)?.version ?? 0;
  return sql.begin(async (tx) => {
    // Start is not a request: a migration of a big table, or the wait for another
    // instance's, may take longer than DATABASE_TIMEOUT_MS.
    await tx`set local statement_timeout = 0`;
    await tx`select pg_advisory_xact_lock(${MIGRATION_LOCK.toString()}::bigint)`;
    await tx`
      create table if not exists schema_migrations (
        version integer primary key,
        name text not null,
        applied_at timestamptz not null default now()
      )`;
    const [row] = await tx`select coalesce(max(version), 0)::int as version from schema_migrations`;
    const from = (row?.['version'] as number | undefined) ?? 0;
    if (from > latest)
      throw new DatabaseStartError(
        `cannot start: the database's schema is version ${from}, newer than this server knows (${latest}); run ` +
          'a newer server or restore a backup',
      );
    const applied = known.filter((m) => m.version > from);
    for (const m of applied) {
      // The file's text as it is in the repository, several statements at once (the simple
      // protocol); nothing from outside goes into it.
      await tx.unsafe(m.sql).simple();
      await tx`insert into schema_migrations (version, name, applied_at) values (${m.version}, ${m.name}, now())`;
    }
    return { from, to: Math.max(from, latest), applied };
  });
}
