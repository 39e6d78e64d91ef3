import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, test } from 'node:test';
import { parseConfig } from '../../src/config.ts';
import { type Database, openDatabase } from '../../src/pg/connect.ts';
import { PgFileClaims } from '../../src/pg/file-bytes.ts';
import { migrate } from '../../src/pg/migrate.ts';
import { scopedSql } from '../../src/pg/scoped-sql.ts';
import { createTestDatabase } from '../helpers/postgres.ts';

let db: Database;
before(async () => {
  db = await openDatabase(parseConfig({ DATABASE_URL: await createTestDatabase(), DATABASE_WAIT_SECONDS: '5' }));
  await migrate(db.sql);
});
after(() => db.close());

// What every backend's claims do is in test/contract/file-claims.ts; this is PostgreSQL's pool.
test("claims of bytes the sweep is removing wait without holding the pool's places the removal needs", async () => {
  // Three places: the sweep's transaction takes one, two claims of the same bytes the others.
  const sql = scopedSql(db.sql, 3);
  const claims = new PgFileClaims(sql, '/nonexistent');
  const bytes = { sha256: 'c'.repeat(64), size: 5 };
  await claims.claim('gone', bytes, 0);
  let late: Promise<void>[] = [];
  const dropped = claims.drop('gone', bytes.sha256, 1, async () => {
    // Under the hash's lock: two uploads of the same bytes claim them, then the removal asks for a place.
    late = [claims.claim('one', bytes, 10), claims.claim('two', bytes, 10)];
    await sleep(300);
    await sql`delete from file_blobs where sha256 = ${bytes.sha256}`;
  });
  const outcome = await Promise.race([dropped, sleep(10_000).then(() => 'stalled')]);
  assert.equal(outcome, 'removed');
  await Promise.all(late);
  assert.deepEqual([await claims.claims('one'), await claims.claims('two')], [[bytes.sha256], [bytes.sha256]]);
});
