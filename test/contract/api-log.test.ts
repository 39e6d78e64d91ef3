import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after } from 'node:test';
import { parseConfig } from '../../src/config.ts';
import { LogAppender } from '../../src/log/appender.ts';
import { PgApiLog } from '../../src/pg/api-log.ts';
import { type Database, openDatabase } from '../../src/pg/connect.ts';
import { migrate } from '../../src/pg/migrate.ts';
import { BACKEND } from '../helpers/backend.ts';
import { beforeClusterStops, createTestDatabase } from '../helpers/postgres.ts';
import { cleanup, tempDataDir } from '../helpers/server.ts';
import { type ApiLogBackend, apiLogContract } from './api-log.ts';

const opened: Database[] = [];
const dirs: string[] = [];
const closeAll = async (): Promise<void> => {
  await Promise.all(opened.splice(0).map((db) => db.close()));
  await Promise.all(dirs.splice(0).map(cleanup));
};
after(closeAll);
if (BACKEND === 'postgres') beforeClusterStops(closeAll);

/** The data folder's log files; small ones, so the suite's days rotate into several. */
async function files(): Promise<ApiLogBackend> {
  const root = await tempDataDir();
  dirs.push(root);
  const dir = join(root, 'logs');
  return {
    open: (opts = {}) => new LogAppender({ dir, maxFileBytes: 256 * 1024, ...opts }),
    where: dir,
    // A file where the folder should be: every append fails (ENOTDIR) until it goes.
    async breakWrites() {
      await mkdir(dir, { recursive: true });
      await rename(dir, `${dir}.away`);
      await writeFile(dir, 'a file where the folder should be');
      return async () => {
        await rm(dir);
        await rename(`${dir}.away`, dir);
      };
    },
  };
}

/** A migrated database of its own. */
async function postgres(): Promise<ApiLogBackend> {
  const url = await createTestDatabase();
  const db = await openDatabase(parseConfig({ DATABASE_URL: url, DATABASE_WAIT_SECONDS: '5' }));
  opened.push(db);
  await migrate(db.sql);
  const where = 'the test database';
  return {
    open: (opts = {}) => new PgApiLog(db.sql, { ...opts, where }),
    where,
    async breakWrites() {
      await db.sql`alter table api_log_chunks rename to api_log_away`;
      return async () => void (await db.sql`alter table api_log_away rename to api_log_chunks`);
    },
  };
}

apiLogContract(BACKEND === 'postgres' ? postgres : files);
