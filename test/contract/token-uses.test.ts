import { mkdir, rm, rmdir } from 'node:fs/promises';
import { join } from 'node:path';
import { PgTokenUsage } from '../../src/pg/token-usage.ts';
import { TokenUsage } from '../../src/store/token-usage.ts';
import { BACKEND } from '../helpers/backend.ts';
import { freshDatabase, freshFolder } from '../helpers/fresh-storage.ts';
import { type TokenUsesBackend, tokenUsesContract } from './token-uses.ts';

/** The data folder's token use, as store/open.ts makes it, over a fresh folder. */
async function files(): Promise<TokenUsesBackend> {
  const { dir, files } = await freshFolder();
  const file = join(dir, 'token-usage.json');
  return {
    async uses() {
      const usage = new TokenUsage(files, file);
      await usage.load();
      return usage;
    },
    // A folder where the file goes: it cannot be renamed into place.
    async breakSaves() {
      await rm(file, { force: true });
      await mkdir(file);
      return () => rmdir(file);
    },
  };
}

/** PostgreSQL's token use, as pg/open.ts makes it, over a fresh database. */
async function postgres(): Promise<TokenUsesBackend> {
  const { sql } = await freshDatabase();
  return {
    async uses(now) {
      const usage = new PgTokenUsage(sql, () => now);
      await usage.load();
      return usage;
    },
    async breakSaves() {
      await sql`alter table token_usage rename to token_usage_away`;
      return async () => void (await sql`alter table token_usage_away rename to token_usage`);
    },
  };
}

tokenUsesContract(BACKEND === 'postgres' ? postgres : files);
