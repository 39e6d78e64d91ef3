import assert from 'node:assert/strict';
import { after, before, beforeEach, test } from 'node:test';
import { parseConfig } from '../../src/config.ts';
import { type Database, openDatabase } from '../../src/pg/connect.ts';
import { PgLimiter } from '../../src/pg/limiter.ts';
import { migrate } from '../../src/pg/migrate.ts';
import { RateLimiter } from '../../src/ratelimit/bucket.ts';
import { createTestDatabase } from '../helpers/postgres.ts';
import { until } from '../helpers/until.ts';

let db: Database;
let other: Database;
before(async () => {
  const url = await createTestDatabase();
  db = await openDatabase(parseConfig({ DATABASE_URL: url, DATABASE_WAIT_SECONDS: '5' }));
  await migrate(db.sql);
  other = await openDatabase(parseConfig({ DATABASE_URL: url, DATABASE_WAIT_SECONDS: '5' }));
});
after(() => Promise.all([db.close(), other.close()]));
beforeEach(async () => {
  await db.sql`delete from rate_buckets`;
});

const T0 = Date.UTC(2024, 0, 1);

test('the shared buckets decide as the memory limiter does, step for step (refill, refund, charge, clock going back)', async () => {
  const clock = { now: T0 };
  const mem = new RateLimiter(() => clock.now);
  const pg = new PgLimiter(db.sql, () => clock.now);
  // [ms to move the clock, operation, limit]
  const steps: [number, 'consume' | 'charge' | 'refund' | 'standing', number][] = [
    [0, 'standing', 3],
    [0, 'consume', 3],
    [0, 'consume', 3],
    [0, 'consume', 3],
    [0, 'consume', 3],
    [7_000, 'consume', 3],
    [13_000, 'consume', 3],
    [0, 'refund', 3],
    [0, 'standing', 3],
    [0, 'charge', 3],
    [0, 'charge', 3],
    [0, 'consume', 3],
    [-5_000, 'consume', 3],
    [-120_000, 'consume', 3],
    [90_000, 'standing', 3],
    [0, 'consume', 2],
    [60_000, 'refund', 2],
    [0, 'standing', 2],
  ];
  for (const [i, [move, op, limit]] of steps.entries()) {
    clock.now += move;
    const want = mem[op]('k', limit);
    const got = await pg[op]('k', limit);
    assert.deepEqual(strip(got), strip(want), `step ${i}: ${op}`);
  }
  await Promise.all(Array.from({ length: 150 }, () => pg.charge('debt', 2)));
  const [row] = await db.sql`select tokens from rate_buckets where key = 'debt'`;
  assert.equal(row?.['tokens'], -120, 'a debt stops at an hour of refill');
});

/** A decision's outcome, without the state's float noise. */
const strip = (d: unknown): unknown =>
  d === null || d === undefined
    ? d
    : (({ allowed, remaining, retryAfterSec }) => ({ allowed, remaining, retryAfterSec }))(
        d as { allowed: boolean; remaining: number; retryAfterSec: number },
      );

test('two instances spending one key at once take turns on its row: no more than the limit goes through', async () => {
  const clock = { now: T0 };
  const a = new PgLimiter(db.sql, () => clock.now);
  const b = new PgLimiter(other.sql, () => clock.now);
  const decisions = await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 ? a : b).consume('token:x', 10)));
  assert.equal(decisions.filter((d) => d.allowed).length, 10);
  assert.deepEqual(
    decisions
      .filter((d) => d.allowed)
      .map((d) => d.remaining)
      .sort((x, y) => x - y),
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
  );
});

test('a limit of 0 costs no query; a refund to full and the upkeep prune leave no row behind', async () => {
  const clock = { now: T0 };
  const pg = new PgLimiter(db.sql, () => clock.now);
  assert.equal((await pg.consume('free', 0)).allowed, true);
  assert.equal(await pg.standing('free', 0), null);
  await pg.consume('k', 5);
  await pg.refund('k', 5);
  await pg.consume('old', 5);
  assert.deepEqual(
    (await db.sql`select key from rate_buckets`).map((r) => r['key']),
    ['old'],
  );
  clock.now += 60 * 60_000;
  assert.equal(await pg.prune(), 0, 'a row that may still be in debt stays');
  clock.now += 2 * 60_000;
  assert.equal(await pg.prune(), 1);
  assert.equal((await db.sql`select count(*)::int as n from rate_buckets`)[0]?.['n'], 0);
});

/** Polls `check` until it holds or a second has passed. */
async function within1s(check: () => boolean, what: string): Promise<void> {
  await until(check, { timeoutMs: 1_000, what, everyMs: 10 });
}

test('a spent budget is known to every instance by its announcement, so asking costs no query; a refund or a lost channel undoes that', async () => {
  const clock = { now: T0 };
  let heard = true;
  const a = new PgLimiter(db.sql, () => clock.now);
  await a.charge('before', 1);
  const b = new PgLimiter(
    other.sql,
    () => clock.now,
    () => heard,
  );
  assert.ok(await b.listen());
  // What was dry before it listened is read from the table once it listens.
  await within1s(() => {
    const d = b.standing('before', 1);
    return !(d instanceof Promise) && d !== null && !d.allowed;
  }, 'the bucket spent before LISTEN');
  assert.equal(b.standing('fresh', 2), null, 'a key never spent: not dry, and no query');

  await a.charge('auth-ip:x', 2);
  await a.charge('auth-ip:x', 2);
  await within1s(() => b.standing('auth-ip:x', 2) !== null, 'the dry bucket announced');
  const fromMemory = b.standing('auth-ip:x', 2);
  assert.ok(!(fromMemory instanceof Promise) && fromMemory !== null);
  assert.deepEqual(strip(fromMemory), strip(await a.standing('auth-ip:x', 2)), 'the same answer the table gives');
  assert.equal(fromMemory.allowed, false);
  assert.equal(fromMemory.retryAfterSec, 30);

  // Half a minute later one request's worth has refilled: not dry any more, with no announcement needed.
  clock.now += 30_000;
  assert.equal(b.standing('auth-ip:x', 2), null);
  await a.charge('auth-ip:x', 2);
  await within1s(() => b.standing('auth-ip:x', 2) !== null, 'dry again');
  await a.refund('auth-ip:x', 2);
  await within1s(() => b.standing('auth-ip:x', 2) === null, 'the refund announced');

  // Without the proof that every announcement arrived, the table is asked.
  heard = false;
  const asked = b.standing('auth-ip:x', 2);
  assert.ok(asked instanceof Promise);
  assert.equal((await asked)?.allowed, true);
  await b.close();
  heard = true;
  const afterClose = b.standing('before', 1);
  assert.ok(afterClose instanceof Promise, 'stopped listening: the table is asked');
  // Awaited, so the query ends before the connections close in `after`.
  assert.equal((await afterClose)?.allowed, false);
});
