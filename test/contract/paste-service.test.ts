import { join } from 'node:path';
import { PgOwnerLists } from '../../src/pg/owner-lists.ts';
import { PgPasteStore } from '../../src/pg/pastes.ts';
import { PgRecentList } from '../../src/pg/recent.ts';
import { PgViewCounts } from '../../src/pg/views.ts';
import { OwnerIndex } from '../../src/store/owner-index.ts';
import { PasteStore } from '../../src/store/pastes.ts';
import { RecentPastes } from '../../src/store/recent.ts';
import { ViewCounter } from '../../src/store/views.ts';
import { storedPaste } from '../helpers/stored.ts';
import { freshState } from '../helpers/fresh-storage.ts';
import { pasteServiceContract, type ServiceParts } from './paste-service.ts';

/** The service's stores on this state, as a server builds them. */
async function parts({ dir, files, sql }: Awaited<ReturnType<typeof freshState>>): Promise<ServiceParts> {
  const reopen = () => parts({ dir, files, sql });
  const stored = (hash: string) => storedPaste(dir, hash);
  if (sql !== null) {
    const store = new PgPasteStore(sql);
    return {
      store,
      views: new PgViewCounts(sql, store),
      owners: new PgOwnerLists(sql),
      recent: new PgRecentList(sql, 3),
      reopen,
      stored,
    };
  }
  const store = new PasteStore(dir, files, 1024 * 1024);
  await store.init();
  const owners = new OwnerIndex(dir, files);
  await owners.init();
  // As store/open.ts wires them: a paste the sweep removes leaves its owner's list.
  store.onSwept = (p) => owners.remove(p.owner_id, p.hash);
  return {
    store,
    views: new ViewCounter(store, files, join(dir, 'views.json')),
    owners,
    recent: new RecentPastes(files, join(dir, 'recent.json'), 3),
    reopen,
    stored,
  };
}

pasteServiceContract(async () => parts(await freshState()));
