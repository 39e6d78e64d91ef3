import { WHOLE_TEXT_BYTES } from '../../src/pg/paste-head.ts';
import { PgPasteStore } from '../../src/pg/pastes.ts';
import { WHOLE_FILE_BYTES } from '../../src/store/paste-head.ts';
import { PasteStore } from '../../src/store/pastes.ts';
import { freshState } from '../helpers/fresh-storage.ts';
import { pasteRepositoryContract } from './paste-repository.ts';

pasteRepositoryContract(async () => {
  const { dir, files, sql } = await freshState();
  if (sql !== null)
    return {
      store: new PgPasteStore(sql),
      reopen: async () => new PgPasteStore(sql),
      wholeBytes: WHOLE_TEXT_BYTES,
      // Every connection of the pool opened first.
      openAll: async () => void (await Promise.all(Array.from({ length: 10 }, () => sql`select pg_sleep(0.05)`))),
    };
  const open = async (): Promise<PasteStore> => {
    const store = new PasteStore(dir, files);
    await store.init();
    return store;
  };
  return { store: await open(), reopen: open, wholeBytes: WHOLE_FILE_BYTES };
});
