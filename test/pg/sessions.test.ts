import assert from 'node:assert/strict';
import { after, beforeEach, describe, test } from 'node:test';
import type { Sql } from 'postgres';
import { parseConfig } from '../../src/config.ts';
import { PgAccounts } from '../../src/pg/accounts.ts';
import { type Database, openDatabase } from '../../src/pg/connect.ts';
import { migrate } from '../../src/pg/migrate.ts';
import { PgSessions } from '../../src/pg/sessions.ts';
import { createTestDatabase } from '../helpers/postgres.ts';

const IDLE = 60 * 60_000;
const START = Date.UTC(2026, 0, 1);
let now: number;
let sql: Sql;
const opened: Database[] = [];
after(() => Promise.all(opened.map((d) => d.close())));

const open = (): PgSessions => new PgSessions(sql, IDLE, () => now);

beforeEach(async () => {
  const db = await openDatabase(parseConfig({ DATABASE_URL: await createTestDatabase(), DATABASE_WAIT_SECONDS: '5' }));
  opened.push(db);
  sql = db.sql;
  await migrate(sql);
  now = START;
  // Sessions belong to users that exist (the table refers to them).
  await sql`insert into users (id, name, role, created_at) select i, 'u' || i, 'user', now() from generate_series(1, 7) i`;
});

// What every backend does with sessions is test/contract/sessions.ts; here, what only a shared database has.
describe('PgSessions', () => {
  test('a logout in one process ends the session in every other at once', async () => {
    const here = open();
    const there = open();
    const s = await here.create(1);
    assert.notEqual(await there.get(s.id), null);
    await here.destroy(s.id);
    assert.equal(await there.get(s.id), null);
  });

  test('a user removed from the accounts takes its sessions along', async () => {
    const s = await open().create(2);
    const keep = await open().create(3);
    const accounts = new PgAccounts(sql, { listen: false });
    await accounts.load();
    await accounts.mutate((doc) => {
      doc.users = doc.users.filter((u) => u.id !== 2);
    });
    assert.equal(await open().get(s.id), null);
    assert.notEqual(await open().get(keep.id), null);
  });
});
