import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** One numbered schema change from `src/pg/migrations/NNN-name.sql`. */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/** The folder of the migration files, beside this module (the build copies it to dist/pg/). */
export const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations/', import.meta.url));

const FILE_RE = /^(\d{3})-([a-z0-9][a-z0-9-]*)\.sql$/;

/**
 * The migrations in `dir`, in order. Their numbers run 1, 2, 3, ... without a gap or a twin:
 * a missing file would otherwise be skipped for good once a later one is recorded.
 */
export async function loadMigrations(dir: string = MIGRATIONS_DIR): Promise<Migration[]> {
  const out: Migration[] = [];
  for (const file of (await readdir(dir)).filter((f) => f.endsWith('.sql')).sort()) {
    const m = FILE_RE.exec(file);
    if (m === null) throw new Error(`${join(dir, file)}: a migration is named NNN-name.sql`);
    const version = Number(m[1]);
    if (version !== out.length + 1)
      throw new Error(`${join(dir, file)}: migration ${out.length + 1} should come next, found ${version}`);
    out.push({ version, name: m[2] as string, sql: await readFile(join(dir, file), 'utf8') });
  }
  if (out.length === 0) throw new Error(`${dir} holds no migrations`);
  return out;
}
