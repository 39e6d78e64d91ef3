import { mkdir, rm, rmdir } from 'node:fs/promises';
import { join } from 'node:path';
import { after } from 'node:test';
import { parseConfig } from '../../src/config.ts';
import { type Database, openDatabase } from '../../src/pg/connect.ts';
import { migrate } from '../../src/pg/migrate.ts';
import { PgTokenUsage } from '../../src/pg/token-usage.ts';
import { DurableFiles } from '../../src/store/files.ts';
import { TokenUsage } from '../../src/store/token-usage.ts';
import { BACKEND } from '../helpers/backend.ts';
import { createTestDatabase } from '../helpers/postgres.ts';
import { cleanup, tempDataDir } from '../helpers/server.ts';
import { type TokenUsesBackend, tokenUsesContract } from './token-uses.ts';

const ends: (() => Promise<unknown>)[] = [];
after(() => Promise.all(ends.map((end) => end())));

/** The data folder's token use, as store/open.ts makes it, over a fresh folder. */
async function files(): Promise<TokenUsesBackend> {
  const dir = await tempDataDir();
  ends.push(() => cleanup(dir));
  const durable = new DurableFiles(join(dir, 'tmp'));
  await durable.init();
  const state = join(dir, 'state');
  await mkdir(state);
  return {
    async uses() {
      const usage = new TokenUsage(durable, join(state, 'token-usage.json'));
      await usage.load();
      return usage;
    },
    // A folder where the file goes: it cannot be renamed into place.
    async breakSaves() {
      const file = join(state, 'token-usage.json');
      await rm(file, { force: true });
      await mkdir(file);
      return () => rmdir(file);
    },
  };
}

/** PostgreSQL's token use, as pg/open.ts makes it, over a fresh database. */
async function postgres(): Promise<TokenUsesBackend> {
  const db: Database = await openDatabase(
    parseConfig({ DATABASE_URL: await createTestDatabase(), DATABASE_WAIT_SECONDS: '5' }),
  );
  ends.push(() => db.close());
  await migrate(db.sql);
  return {
    async uses(now) {
      const usage = new PgTokenUsage(db.sql, () => now);
      await usage.load();
      return usage;
    },
    async breakSaves() {
      await db.sql`alter table token_usage rename to token_usage_away`;
      return async () => void (await db.sql`alter table token_usage_away rename to token_usage`);
    },
  };
}

tokenUsesContract(BACKEND === 'postgres' ? postgres : files);
