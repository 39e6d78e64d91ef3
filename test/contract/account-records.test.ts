import { PgAccounts } from '../../src/pg/accounts.ts';
import { AccountStore } from '../../src/store/accounts.ts';
import { BACKEND } from '../helpers/backend.ts';
import { atEnd, freshDatabase, freshFolder, pool } from '../helpers/fresh-storage.ts';
import { type AccountRecordsBackend, accountRecordsContract } from './account-records.ts';

/** The data folder's accounts: the server's watching the folder, another process's (the CLI's) not. */
async function files(): Promise<AccountRecordsBackend> {
  const { dir, files } = await freshFolder();
  const server = new AccountStore(dir, files);
  const other = new AccountStore(dir, files);
  atEnd(() => server.unwatch());
  await Promise.all([server.load(), other.load()]);
  await server.watch();
  return { server, other, unwatch: async () => server.unwatch() };
}

/** PostgreSQL's accounts: two processes, each on its own pool, the server's listening. */
async function postgres(): Promise<AccountRecordsBackend> {
  const a = await freshDatabase();
  const b = await pool(a.url);
  const server = new PgAccounts(a.sql);
  const other = new PgAccounts(b.sql, { listen: false });
  atEnd(() => server.close());
  atEnd(() => other.close());
  await Promise.all([server.load(), other.load()]);
  return { server, other, unwatch: () => server.unlisten() };
}

accountRecordsContract(BACKEND === 'postgres' ? postgres : files);
