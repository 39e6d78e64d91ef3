import assert from 'node:assert/strict';
import { after, before, beforeEach, test } from 'node:test';
import { parseConfig } from '../../src/config.ts';
import { PgBuckets } from '../../src/pg/buckets.ts';
import { type Database, openDatabase } from '../../src/pg/connect.ts';
import { migrate } from '../../src/pg/migrate.ts';
import { RateLimiter } from '../../src/ratelimit/bucket.ts';
import { createTestDatabase } from '../helpers/postgres.ts';

let db: Database;
before(async () => {
  db = await openDatabase(parseConfig({ DATABASE_URL: await createTestDatabase(), DATABASE_WAIT_SECONDS: '5' }));
  await migrate(db.sql);
});
after(() => db.close());
beforeEach(async () => {
  await db.sql`delete from rate_buckets`;
});

const T0 = Date.UTC(2024, 0, 1);
const rows = async (): Promise<Record<string, number>> =>
  Object.fromEntries((await db.sql`select key, tokens from rate_buckets`).map((r) => [r['key'], r['tokens']]));

/** A limiter and its saver on one clock, restored from the table as a server starts. */
async function instance(clock: { now: number }): Promise<{ rl: RateLimiter; pg: PgBuckets }> {
  const rl = new RateLimiter(() => clock.now);
  const pg = new PgBuckets(db.sql, () => clock.now);
  await pg.restore(rl);
  return { rl, pg };
}

test('saved buckets are restored as they were, to the millisecond', async () => {
  const clock = { now: T0 + 123 };
  const a = await instance(clock);
  a.rl.consume('token:x', 2);
  a.rl.consume('token:x', 2);
  a.rl.consume('ip:10.0.0.1', 10);
  clock.now += 7;
  a.rl.charge('authfail:10.0.0.2', 3);
  await a.pg.save(a.rl);
  const b = await instance(clock);
  assert.deepEqual(b.rl.snapshot(), a.rl.snapshot());
  assert.equal(b.rl.consume('token:x', 2).allowed, false);
});

test('a save writes only the buckets that changed since the last save or restore', async () => {
  const clock = { now: T0 };
  const { rl, pg } = await instance(clock);
  // An idle server: nothing to write, ever.
  await pg.save(rl);
  assert.deepEqual(await rows(), {});
  rl.consume('ip:a', 5);
  rl.consume('ip:b', 5);
  await pg.save(rl);
  assert.deepEqual(await rows(), { 'ip:a': 4, 'ip:b': 4 });
  // Rows changed behind its back are left alone unless their bucket changed.
  await db.sql`update rate_buckets set tokens = 1`;
  await pg.save(rl);
  assert.deepEqual(await rows(), { 'ip:a': 1, 'ip:b': 1 });
  rl.consume('ip:a', 5);
  await pg.save(rl);
  assert.deepEqual(await rows(), { 'ip:a': 0, 'ip:b': 1 }, 'the spending taken from the row as it is');
  // Read back at the next start: nothing to write.
  const again = await instance(clock);
  await db.sql`delete from rate_buckets`;
  await again.pg.save(again.rl);
  assert.deepEqual(await rows(), {});
});

test('a refund, a charge and a prune each count as a change; a bucket full again leaves the table', async () => {
  const clock = { now: T0 };
  const { rl, pg } = await instance(clock);
  rl.consume('ip:1', 2);
  await pg.save(rl);
  rl.refund('ip:1', 2);
  await pg.save(rl);
  assert.deepEqual(await rows(), {}, 'given back, full, gone');
  rl.charge('ip:2', 1);
  await pg.save(rl);
  assert.deepEqual(await rows(), { 'ip:2': 0 });
  clock.now += 120_000;
  rl.prune();
  await pg.save(rl);
  assert.deepEqual(await rows(), {}, 'refilled and pruned');
});

test("two instances spending from the same keys lose none of each other's requests", async () => {
  const clock = { now: T0 };
  const a = await instance(clock);
  const b = await instance(clock);
  for (let i = 0; i < 3; i++) a.rl.consume('token:shared', 10);
  a.rl.consume('ip:only-a', 10);
  for (let i = 0; i < 2; i++) b.rl.consume('token:shared', 10);
  b.rl.consume('ip:only-b', 10);
  await a.pg.save(a.rl);
  await b.pg.save(b.rl);
  assert.deepEqual(await rows(), { 'token:shared': 5, 'ip:only-a': 9, 'ip:only-b': 9 });
  // Further spending counts from each instance's own last save, not from the row.
  a.rl.consume('token:shared', 10);
  await Promise.all([a.pg.save(a.rl), b.pg.save(b.rl)]);
  assert.equal((await rows())['token:shared'], 4);
  // Later, the row refills for the time passed before the spending is taken.
  clock.now += 6_000;
  b.rl.consume('token:shared', 10);
  await b.pg.save(b.rl);
  assert.ok(Math.abs(((await rows())['token:shared'] ?? 0) - 4) < 1e-9, '4 + 1 refilled - 1 spent');
  // One instance giving a token back gives back only its own.
  a.rl.refund('token:shared', 10);
  await a.pg.save(a.rl);
  assert.ok(Math.abs(((await rows())['token:shared'] ?? 0) - 5) < 1e-9);
  const c = await instance(clock);
  assert.ok(Math.abs((c.rl.snapshot()['token:shared']?.tokens ?? 0) - 5) < 1e-9, 'restored as the row holds it');
});

test('a bucket spent while a save runs is saved again at the next save; saves run one after the other', async () => {
  const clock = { now: T0 };
  const { rl, pg } = await instance(clock);
  rl.consume('ip:k0', 5);
  const first = pg.save(rl);
  setImmediate(() => rl.consume('ip:k0', 5));
  const second = pg.save(rl);
  await first;
  await second;
  await pg.save(rl);
  assert.deepEqual(await rows(), { 'ip:k0': 3 });
});

test('a failed save is tried again whole at the next save, its spending counted once', async () => {
  const clock = { now: T0 };
  const { rl, pg } = await instance(clock);
  rl.consume('token:a', 3);
  await db.sql`alter table rate_buckets rename to rate_buckets_away`;
  try {
    await assert.rejects(pg.save(rl));
  } finally {
    await db.sql`alter table rate_buckets_away rename to rate_buckets`;
  }
  await pg.save(rl);
  await pg.save(rl);
  assert.deepEqual(await rows(), { 'token:a': 2 });
});

test('more buckets than one statement takes all come back, odd keys as plain keys', async () => {
  const clock = { now: T0 };
  const { rl, pg } = await instance(clock);
  const n = 1205;
  for (let i = 0; i < n; i++) rl.consume(`ip:10.0.${i >> 8}.${i & 255}`, 3);
  rl.consume('__proto__', 3);
  rl.consume('it\'s "quoted"', 3);
  await pg.save(rl);
  const back = await instance(clock);
  assert.equal(back.rl.size, n + 2);
  assert.deepEqual(back.rl.snapshot(), rl.snapshot());
});

test('rows untouched for over an hour are pruned; rows full by now are not restored', async () => {
  const clock = { now: T0 };
  const { rl, pg } = await instance(clock);
  rl.consume('ip:old', 60);
  await pg.save(rl);
  clock.now += 2 * 60_000;
  const late = await instance(clock);
  assert.equal(late.rl.size, 0, 'refilled within the minute: not restored');
  await db.sql`insert into rate_buckets values ('ip:debt', -3600, ${new Date(T0)}, 60)`;
  clock.now = T0 + 61 * 60_000 + 1;
  rl.consume('ip:new', 60);
  await pg.save(rl);
  assert.deepEqual(Object.keys(await rows()), ['ip:new']);
});
