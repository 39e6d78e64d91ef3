import { newSessionId, newSessionRecord } from '../../src/auth/sessions.ts';
import { PgSessions } from '../../src/pg/sessions.ts';
import { PgShownOnce } from '../../src/pg/shown-once.ts';
import { HeldInMemory } from '../../src/store/shown-once.ts';
import { freshState } from '../helpers/fresh-storage.ts';
import { shownOnceContract } from './shown-once.ts';

shownOnceContract(async () => {
  const { sql } = await freshState();
  // The data folder holds the values in memory, for any session it is handed.
  if (sql === null)
    return { store: new HeldInMemory(), session: async () => ({ id: newSessionId(), record: newSessionRecord(1, 0) }) };
  // The database's values belong to stored sessions, of a user that exists.
  await sql`insert into users (id, name, role, created_at) values (1, 'u1', 'user', now())`;
  const sessions = new PgSessions(sql, 3_600_000, Date.now);
  return { store: new PgShownOnce(sql), session: () => sessions.create(1) };
});
