import { join } from 'node:path';
import { after } from 'node:test';
import type { Sql } from 'postgres';
import { parseConfig } from '../../src/config.ts';
import { type Database, openDatabase } from '../../src/pg/connect.ts';
import { migrate } from '../../src/pg/migrate.ts';
import { DurableFiles } from '../../src/store/files.ts';
import { BACKEND, backendEnv } from './backend.ts';
import { createTestDatabase } from './postgres.ts';
import { cleanup, tempDataDir } from './server.ts';

/** What to end after this file's tests, last opened first: stores before the pools and folders they use. */
const ends: (() => unknown)[] = [];
after(async () => {
  for (const end of ends.reverse()) await end();
});

/** Runs `end` after this file's tests, before what was opened earlier. */
export const atEnd = (end: () => unknown): void => void ends.push(end);

/** A fresh data folder and its durable writes, removed after the tests (for the contract suites, test/contract/). */
export async function freshFolder(): Promise<{ dir: string; files: DurableFiles }> {
  const dir = await tempDataDir();
  atEnd(() => cleanup(dir));
  const files = new DurableFiles(join(dir, 'tmp'));
  await files.init();
  return { dir, files };
}

/** A pool on the database at `url`, ended after the tests. */
export async function pool(url: string): Promise<Database> {
  const db = await openDatabase(parseConfig({ DATABASE_URL: url, DATABASE_WAIT_SECONDS: '5' }));
  atEnd(() => db.close());
  return db;
}

/** A pool on a fresh, migrated database, and its URL for more pools. */
export async function freshDatabase(): Promise<{ sql: Sql; url: string }> {
  const url = await createTestDatabase();
  const { sql } = await pool(url);
  await migrate(sql);
  return { sql, url };
}

/**
 * A fresh data folder and, on PostgreSQL (TEST_BACKEND=postgres), the folder's own database,
 * migrated, which test/helpers/stored.ts reads under the folder's name; `sql` is null on the
 * data folder.
 */
export async function freshState(): Promise<{ dir: string; files: DurableFiles; sql: Sql | null }> {
  const { dir, files } = await freshFolder();
  if (BACKEND === 'files') return { dir, files, sql: null };
  const { sql } = await pool((await backendEnv(dir))['DATABASE_URL'] as string);
  await migrate(sql);
  return { dir, files, sql };
}
