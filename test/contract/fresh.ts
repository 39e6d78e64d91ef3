import { join } from 'node:path';
import { after } from 'node:test';
import type { Sql } from 'postgres';
import { parseConfig } from '../../src/config.ts';
import { type Database, openDatabase } from '../../src/pg/connect.ts';
import { migrate } from '../../src/pg/migrate.ts';
import { DurableFiles } from '../../src/store/files.ts';
import { BACKEND, backendEnv } from '../helpers/backend.ts';
import { beforeClusterStops } from '../helpers/postgres.ts';
import { cleanup, tempDataDir } from '../helpers/server.ts';

/**
 * A fresh, empty state for a contract suite's factory (test/contract/README.md): a data
 * folder with its DurableFiles ready, and with TEST_BACKEND=postgres a database of its own,
 * migrated, that test/helpers/stored.ts reads under the same folder's name.
 */
export interface FreshState {
  readonly dir: string;
  readonly files: DurableFiles;
  /** The database's pool; null on the data folder. */
  readonly sql: Sql | null;
}

const opened: Database[] = [];
const dirs: string[] = [];

const closeAll = async (): Promise<void> => {
  await Promise.all(opened.splice(0).map((db) => db.close()));
  await Promise.all(dirs.splice(0).map(cleanup));
};
after(closeAll);
beforeClusterStops(closeAll);

export async function freshState(): Promise<FreshState> {
  const dir = await tempDataDir();
  dirs.push(dir);
  const files = new DurableFiles(join(dir, 'tmp'));
  await files.init();
  if (BACKEND === 'files') return { dir, files, sql: null };
  const url = (await backendEnv(dir))['DATABASE_URL'];
  const db = await openDatabase(parseConfig({ DATABASE_URL: url, DATABASE_WAIT_SECONDS: '5' }));
  opened.push(db);
  await migrate(db.sql);
  return { dir, files, sql: db.sql };
}
