import { join } from 'node:path';
import { after } from 'node:test';
import { parseConfig } from '../../src/config.ts';
import { type Database, openDatabase } from '../../src/pg/connect.ts';
import { migrate } from '../../src/pg/migrate.ts';
import { PgPasteStore } from '../../src/pg/pastes.ts';
import { PgViewCounts } from '../../src/pg/views.ts';
import { DurableFiles } from '../../src/store/files.ts';
import { PasteStore } from '../../src/store/pastes.ts';
import { ViewCounter } from '../../src/store/views.ts';
import { BACKEND } from '../helpers/backend.ts';
import { createTestDatabase } from '../helpers/postgres.ts';
import { cleanup, tempDataDir } from '../helpers/server.ts';
import { type ViewCountsBackend, viewCountsContract } from './view-counts.ts';

const ends: (() => Promise<unknown>)[] = [];
after(() => Promise.all(ends.map((end) => end())));

/** The data folder's counter, as store/open.ts makes it, over a fresh folder. */
async function files(): Promise<ViewCountsBackend> {
  const dir = await tempDataDir();
  ends.push(() => cleanup(dir));
  const durable = new DurableFiles(join(dir, 'tmp'));
  await durable.init();
  const pastes = new PasteStore(dir, durable, 0);
  await pastes.init();
  return {
    pastes,
    async counter() {
      const views = new ViewCounter(pastes, durable, join(dir, 'views.json'));
      await views.load();
      return views;
    },
  };
}

/** PostgreSQL's counter, as pg/open.ts makes it, over a fresh database. */
async function postgres(): Promise<ViewCountsBackend> {
  const db: Database = await openDatabase(
    parseConfig({ DATABASE_URL: await createTestDatabase(), DATABASE_WAIT_SECONDS: '5' }),
  );
  ends.push(() => db.close());
  await migrate(db.sql);
  const pastes = new PgPasteStore(db.sql);
  return { pastes, counter: async () => new PgViewCounts(db.sql, pastes) };
}

viewCountsContract(BACKEND === 'postgres' ? postgres : files);
