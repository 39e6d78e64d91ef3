import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { parseConfig } from '../../src/config.ts';
import { type Database, openDatabase } from '../../src/pg/connect.ts';
import { migrate } from '../../src/pg/migrate.ts';
import { loadServerKey } from '../../src/pg/server-key.ts';
import { createTestDatabase } from '../helpers/postgres.ts';

const opened: Database[] = [];
after(() => Promise.all(opened.map((d) => d.close())));

async function open(url: string): Promise<Database> {
  const db = await openDatabase(parseConfig({ DATABASE_URL: url, DATABASE_WAIT_SECONDS: '5' }));
  opened.push(db);
  return db;
}

test('the server key is 32 random bytes, made once and the same on every later load', async () => {
  const db = await open(await createTestDatabase());
  await migrate(db.sql);
  const key = await loadServerKey(db.sql);
  assert.equal(key.length, 32);
  assert.notDeepEqual(key, Buffer.alloc(32));
  assert.deepEqual(await loadServerKey(db.sql), key);
  assert.equal((await db.sql`select count(*)::int as n from server_key`)[0]?.['n'], 1);
  // Another database, another key: it is random, not derived from anything.
  const elsewhere = await open(await createTestDatabase());
  await migrate(elsewhere.sql);
  assert.notDeepEqual(await loadServerKey(elsewhere.sql), key);
});

test('instances starting together agree on one key', async () => {
  const url = await createTestDatabase();
  const dbs = await Promise.all([open(url), open(url), open(url), open(url)]);
  await migrate((dbs[0] as Database).sql);
  const keys = await Promise.all(dbs.flatMap((db) => [loadServerKey(db.sql), loadServerKey(db.sql)]));
  for (const k of keys) assert.deepEqual(k, keys[0]);
  assert.equal((await (dbs[0] as Database).sql`select count(*)::int as n from server_key`)[0]?.['n'], 1);
});
