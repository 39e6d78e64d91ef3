import assert from 'node:assert/strict';
import { after, before, beforeEach, test } from 'node:test';
import { parseConfig } from '../../src/config.ts';
import { type Database, openDatabase } from '../../src/pg/connect.ts';
import { migrate } from '../../src/pg/migrate.ts';
import { PgTokenUsage } from '../../src/pg/token-usage.ts';
import { createTestDatabase } from '../helpers/postgres.ts';

let db: Database;
before(async () => {
  db = await openDatabase(parseConfig({ DATABASE_URL: await createTestDatabase(), DATABASE_WAIT_SECONDS: '5' }));
  await migrate(db.sql);
});
after(() => db.close());
beforeEach(async () => {
  await db.sql`delete from token_usage`;
  await db.sql`delete from token_usage_hourly`;
});

const HOUR = 3_600_000;
const T0 = Date.UTC(2026, 2, 1, 12, 0, 0, 123);

async function loaded(now: number): Promise<PgTokenUsage> {
  const u = new PgTokenUsage(db.sql, () => now);
  await u.load();
  return u;
}

// What every backend's token use does is in test/contract/token-uses.ts; these are PostgreSQL's own.
test("two instances saving the same tokens add their requests and keep the later use, neither losing the other's", async () => {
  const a = new PgTokenUsage(db.sql, () => T0);
  const b = new PgTokenUsage(db.sql, () => T0);
  for (let i = 0; i < 3; i++) a.touch('tok', T0 - 10 + i, '10.0.0.1');
  b.touch('tok', T0, '10.0.0.2');
  b.touch('tok', T0 - HOUR, '10.0.0.2');
  b.touch('other', T0 - 5);
  await b.save();
  await a.save();
  let c = await loaded(T0);
  assert.deepEqual([c.get('tok'), c.ip('tok'), c.lastDay('tok', T0), c.get('other')], [T0, '10.0.0.2', 5, T0 - 5]);
  // Later uses add to what is there, saved concurrently.
  a.touch('tok', T0 + 5, '10.0.0.1');
  b.touch('tok', T0 + 1);
  await Promise.all([a.save(), b.save()]);
  c = await loaded(T0 + 5);
  assert.deepEqual([c.get('tok'), c.ip('tok'), c.lastDay('tok', T0 + 5)], [T0 + 5, '10.0.0.1', 7]);
});

test('hours older than a day are deleted at a save and never loaded', async () => {
  let now = T0;
  const usage = new PgTokenUsage(db.sql, () => now);
  usage.touch('tok', T0);
  await usage.save();
  await db.sql`insert into token_usage_hourly values ('tok', ${Math.floor(T0 / HOUR) - 23}, 4), ('tok', ${Math.floor(T0 / HOUR) - 24}, 9)`;
  assert.equal((await loaded(T0)).lastDay('tok', T0), 5, 'the hour 24 before is not loaded');
  now = T0 + 30 * HOUR;
  usage.touch('tok', now);
  await usage.save();
  const hours = await db.sql`select hour::float8 as hour from token_usage_hourly order by hour`;
  assert.deepEqual(
    hours.map((r) => r['hour']),
    [Math.floor(now / HOUR)],
  );
});
