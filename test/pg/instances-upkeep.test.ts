import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseConfig } from '../../src/config.ts';
import { openDatabase } from '../../src/pg/connect.ts';
import { migrate } from '../../src/pg/migrate.ts';
import { UpkeepTurns } from '../../src/pg/turns.ts';
import { startInstances } from '../helpers/instances.ts';
import { createTestDatabase } from '../helpers/postgres.ts';
import { req, TestClock } from '../helpers/server.ts';

// The upkeep's periodic jobs run once across the instances on one database, not once each
// (README, Running several instances).

test('one instance of three does each round of the expiry sweep, whichever runs its upkeep first', async (t) => {
  const clock = new TestClock();
  const sweptBy = new Set<number>();
  // Slices of one paste: a round that sweeps says which instance does it.
  const set = await startInstances(t, 3, {
    clock,
    upkeep: (i) => ({ everyMs: 3_600_000, sweepSlice: 1, betweenSlices: async () => void sweptBy.add(i) }),
  });
  const token = await set.token({ user: 'alice' });
  for (let round = 0; round < 3; round++) {
    const hashes: string[] = [];
    for (let n = 0; n < 3; n++) {
      const made = await req(set.at(n), 'POST', '/api/v1/paste_create.php', {
        token,
        body: { content: `r${round} p${n}`, expiry: '10m' },
      });
      assert.equal(made.status, 200);
      hashes.push(made.json['hash'] as string);
    }
    clock.advance(11 * 60_000);
    sweptBy.clear();
    await Promise.all(set.all.map((s) => s.upkeep()));
    assert.equal(sweptBy.size, 1, `round ${round}: swept by ${[...sweptBy].join(', ')}`);
    // And the round's work was done: the swept pastes are tombstones, which still answer 410.
    for (const [n, hash] of hashes.entries())
      assert.equal((await req(set.at(n + 1), 'GET', `/api/v1/paste.php?hash=${hash}`, { token })).status, 410);
  }
});

test('of instances trying a job at once, one takes the round; the next round is taken once it is due', async () => {
  const url = await createTestDatabase();
  const dbs = await Promise.all(
    [0, 1, 2].map(() => openDatabase(parseConfig({ DATABASE_URL: url, DATABASE_WAIT_SECONDS: '5' }))),
  );
  try {
    await migrate((dbs[0] as (typeof dbs)[0]).sql);
    let now = Date.UTC(2026, 0, 1);
    const turns = dbs.map((d) => new UpkeepTurns(d.sql, () => now));
    const tryAll = async (): Promise<number> =>
      (await Promise.all(turns.flatMap((u) => [u.take('job', 60_000), u.take('job', 60_000)]))).filter(Boolean).length;
    assert.equal(await tryAll(), 1);
    now += 59_999;
    assert.equal(await tryAll(), 0, 'not yet due');
    now += 1;
    assert.equal(await tryAll(), 1);
    assert.equal(await (turns[0] as UpkeepTurns).take('another job', 60_000), true, 'each job has its own rounds');
    now -= 10 * 60_000;
    assert.equal(await tryAll(), 1, 'a round recorded far ahead of the clock does not stop the job');
  } finally {
    await Promise.all(dbs.map((d) => d.close()));
  }
});
