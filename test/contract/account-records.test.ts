import { join } from 'node:path';
import { after } from 'node:test';
import { parseConfig } from '../../src/config.ts';
import { PgAccounts } from '../../src/pg/accounts.ts';
import { type Database, openDatabase } from '../../src/pg/connect.ts';
import { migrate } from '../../src/pg/migrate.ts';
import { AccountStore } from '../../src/store/accounts.ts';
import { DurableFiles } from '../../src/store/files.ts';
import { BACKEND } from '../helpers/backend.ts';
import { createTestDatabase } from '../helpers/postgres.ts';
import { cleanup, tempDataDir } from '../helpers/server.ts';
import { type AccountRecordsBackend, accountRecordsContract } from './account-records.ts';

/** Run in reverse: stores before the pools and folders they use. */
const ends: (() => unknown)[] = [];
after(async () => {
  for (const end of ends.reverse()) await end();
});

/** The data folder's accounts: the server's watching the folder, another process's (the CLI's) not. */
async function files(): Promise<AccountRecordsBackend> {
  const dir = await tempDataDir();
  ends.push(() => cleanup(dir));
  const durable = new DurableFiles(join(dir, 'tmp'));
  await durable.init();
  const server = new AccountStore(dir, durable);
  const other = new AccountStore(dir, durable);
  ends.push(() => server.unwatch());
  await Promise.all([server.load(), other.load()]);
  await server.watch();
  return { server, other, unwatch: async () => server.unwatch() };
}

/** PostgreSQL's accounts: two processes, each on its own pool, the server's listening. */
async function postgres(): Promise<AccountRecordsBackend> {
  const url = await createTestDatabase();
  const pool = async (): Promise<Database> => {
    const db = await openDatabase(parseConfig({ DATABASE_URL: url, DATABASE_WAIT_SECONDS: '5' }));
    ends.push(() => db.close());
    return db;
  };
  const a = await pool();
  await migrate(a.sql);
  const b = await pool();
  const server = new PgAccounts(a.sql);
  const other = new PgAccounts(b.sql, { listen: false });
  ends.push(
    () => server.close(),
    () => other.close(),
  );
  await Promise.all([server.load(), other.load()]);
  return { server, other, unwatch: () => server.unlisten() };
}

accountRecordsContract(BACKEND === 'postgres' ? postgres : files);
