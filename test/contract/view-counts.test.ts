import { join } from 'node:path';
import { PgPasteStore } from '../../src/pg/pastes.ts';
import { PgViewCounts } from '../../src/pg/views.ts';
import { PasteStore } from '../../src/store/pastes.ts';
import { ViewCounter } from '../../src/store/views.ts';
import { BACKEND } from '../helpers/backend.ts';
import { freshDatabase, freshFolder } from '../helpers/fresh-storage.ts';
import { type ViewCountsBackend, viewCountsContract } from './view-counts.ts';

/** The data folder's counter, as store/open.ts makes it, over a fresh folder. */
async function files(): Promise<ViewCountsBackend> {
  const { dir, files } = await freshFolder();
  const pastes = new PasteStore(dir, files, 0);
  await pastes.init();
  return {
    pastes,
    async counter() {
      const views = new ViewCounter(pastes, files, join(dir, 'views.json'));
      await views.load();
      return views;
    },
  };
}

/** PostgreSQL's counter, as pg/open.ts makes it, over a fresh database. */
async function postgres(): Promise<ViewCountsBackend> {
  const { sql } = await freshDatabase();
  const pastes = new PgPasteStore(sql);
  return { pastes, counter: async () => new PgViewCounts(sql, pastes) };
}

viewCountsContract(BACKEND === 'postgres' ? postgres : files);
