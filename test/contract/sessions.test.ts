import { join } from 'node:path';
import { PgSessions } from '../../src/pg/sessions.ts';
import { SessionStore } from '../../src/store/sessions.ts';
import { storedSessions } from '../helpers/stored.ts';
import { freshState } from '../helpers/fresh-storage.ts';
import { IDLE_MS, sessionsContract } from './sessions.ts';

sessionsContract(async (clock) => {
  const { dir, files, sql } = await freshState();
  if (sql !== null)
    // Sessions belong to users that exist (the table refers to them).
    await sql`insert into users (id, name, role, created_at) select i, 'u' || i, 'user', now() from generate_series(1, 7) i`;
  return {
    open: async () => {
      if (sql !== null) return new PgSessions(sql, IDLE_MS, clock);
      const store = new SessionStore(join(dir, 'sessions'), files, IDLE_MS, clock);
      await store.load();
      return store;
    },
    stored: () => storedSessions(dir),
  };
});
