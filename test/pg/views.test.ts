import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import type { Sql, TransactionSql } from 'postgres';
import { parseConfig } from '../../src/config.ts';
import { type Database, openDatabase } from '../../src/pg/connect.ts';
import { migrate } from '../../src/pg/migrate.ts';
import { PgPasteStore } from '../../src/pg/pastes.ts';
import { PgViewCounts } from '../../src/pg/views.ts';
import { NO_CONTENT, type Paste } from '../../src/paste/paste.ts';
import { pasteRecord } from '../helpers/paste-record.ts';
import { createTestDatabase } from '../helpers/postgres.ts';
import { until } from '../helpers/until.ts';

// What every backend's view counts do is in test/contract/view-counts.ts; these are PostgreSQL's own.

const opened: Database[] = [];
after(() => Promise.all(opened.map((d) => d.close())));

async function fresh(): Promise<{ sql: Sql; store: PgPasteStore; url: string }> {
  const url = await createTestDatabase();
  const db = await openDatabase(parseConfig({ DATABASE_URL: url, DATABASE_WAIT_SECONDS: '5' }));
  opened.push(db);
  await migrate(db.sql);
  return { sql: db.sql, store: new PgPasteStore(db.sql), url };
}

const record = pasteRecord;

/** Sessions of this test's database waiting for a lock another holds. */
const waitingForLock = async (sql: Sql): Promise<number> =>
  (
    await sql<{ n: number }[]>`select count(*)::int as n from pg_stat_activity
      where datname = current_database() and wait_event_type = 'Lock'`
  )[0]?.n ?? 0;

const countOf = async (store: PgPasteStore, hash: string): Promise<number | undefined> =>
  (await store.get(hash))?.view_count;

test("a count made while its fold waits stays pending over the row's new count", async () => {
  const { store, sql, url } = await fresh();
  await store.create(() => record('Waits00001', { view_count: 5 }));
  const views = new PgViewCounts(sql);
  const other = await openDatabase(parseConfig({ DATABASE_URL: url, DATABASE_WAIT_SECONDS: '5' }));
  opened.push(other);
  // The paste's first fold waits for a change of the paste under way (it makes the paste's
  // row of views, which the paste must outlive); a later one for another fold holding that row.
  const holders = [
    (tx: TransactionSql) => tx`select 1 from pastes where hash = 'Waits00001' for update`,
    (tx: TransactionSql) => tx`select 1 from paste_views where hash = 'Waits00001' for update`,
  ];
  let count = 5;
  for (const hold of holders) {
    views.add('Waits00001', count);
    views.add('Waits00001', count);
    let release = (): void => undefined;
    let holding = false;
    const held = other.sql.begin(async (tx) => {
      await hold(tx);
      holding = true;
      await new Promise<void>((resolve) => {
        release = resolve;
      });
    });
    await until(() => holding, { what: 'the row to be held' });
    const draining = views.drain();
    await until(async () => (await waitingForLock(other.sql)) > 0, { what: 'the fold to wait for the held row' });
    assert.equal(views.add('Waits00001', count), 3, 'counted meanwhile');
    release();
    await held;
    await draining;
    assert.equal(await countOf(store, 'Waits00001'), count + 2);
    assert.equal(views.pending('Waits00001', count + 2), 1);
    await views.drain();
    assert.equal(await countOf(store, 'Waits00001'), count + 3);
    assert.equal(views.size, 0);
    count += 3;
  }
});

// What every backend does with a burned or deleted paste's count is in test/contract/view-counts.ts.
test('a burned or deleted paste gets no row of views', async () => {
  const { store, sql } = await fresh();
  await store.create(() => record('Burned0001', { burned: true, content_json: NO_CONTENT, view_count: 1 }));
  await store.create(() => record('Deleted001'));
  await store.create(() => record('Living0001'));
  const views = new PgViewCounts(sql);
  views.add('Burned0001', 1);
  views.add('Deleted001', 0);
  views.add('Living0001', 0);
  await store.transact('Deleted001', () => ({ result: null, next: 'delete' as const }));
  await views.drain();
  const left = await sql`select hash from paste_views order by hash`;
  assert.deepEqual(
    left.map((r) => r['hash']),
    ['Living0001'],
    'only a paste that can still be viewed has a row of views',
  );
});

test("a save asked for while a drain runs folds nothing twice; two servers' counts add up", async () => {
  const { sql } = await fresh();
  // More pastes than one statement folds, made by SQL as an operator or a server of the
  // version before may make them: each gets its row of views all the same.
  const n = 1_203;
  await sql`insert into pastes (hash, owner_id, privacy, created_at, updated_at, language, title, highlight, burn_after_read, content_json)
    select lpad(i::text, 6, '0') || 'Many', 1, 'public', now(), now(), 'text', '', true, false, '"x"'
    from generate_series(1, ${n}) as i`;
  const hashOf = (i: number): string => `${String(i).padStart(6, '0')}Many`;
  const a = new PgViewCounts(sql);
  const b = new PgViewCounts(sql);
  for (let i = 1; i <= n; i++) {
    a.add(hashOf(i), 0);
    if (i % 2 === 0) a.add(hashOf(i), 0);
    b.add(hashOf(i), 0);
  }
  await Promise.all([a.drain(), a.save(), b.save(), a.drain()]);
  const [row] = await sql`select sum(p.view_count + v.views)::int as total, min(p.view_count + v.views)::int as least
    from pastes p join paste_views v using (hash)`;
  assert.equal(row?.['total'], n + Math.floor(n / 2) + n);
  assert.equal(row?.['least'], 2);
  assert.equal(a.size + b.size, 0);
});

/** `promise`, or a rejection naming `what` once `ms` have passed. */
const within = <T>(ms: number, what: string, promise: Promise<T>): Promise<T> =>
  Promise.race([
    promise,
    new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error(`${what}: not done within ${ms} ms`)), ms).unref(),
    ),
  ]);

test('a fold neither waits for a change of the paste nor is undone by it, and a burn takes the folded views', async () => {
  const { store, sql } = await fresh();
  await store.create(() => record('Edited0001', { view_count: 2 }));
  await store.create(() => record('Burnt00001', { burn_after_read: 1 }));
  const views = new PgViewCounts(sql);
  for (let i = 0; i < 3; i++) views.add('Edited0001', 2);
  views.add('Burnt00001', 0);
  await views.drain();
  assert.equal(await countOf(store, 'Edited0001'), 5);

  // An edit holds the paste's row; a fold made meanwhile ends first, and the edit keeps it.
  await store.transact('Edited0001', async (cur) => {
    const p = cur as Paste;
    assert.equal(p.view_count, 5);
    views.add('Edited0001', 5);
    await within(5_000, 'a fold while an edit holds the row', views.drain());
    return { result: null, next: { ...p, title: 'edited', revision: (p.revision ?? 1) + 1 } };
  });
  const edited = await store.get('Edited0001');
  assert.equal(edited?.title, 'edited');
  assert.equal(edited?.view_count, 6, 'the fold made during the edit stays counted, and none twice');

  // A burn (its reading counts one) takes the views folded before it into the tombstone; none after.
  await store.transact('Burnt00001', (cur) => {
    const p = cur as Paste;
    return { result: null, next: { ...p, view_count: p.view_count + 1, burned: true, content_json: NO_CONTENT } };
  });
  assert.equal(await countOf(store, 'Burnt00001'), 2);
  views.add('Burnt00001', 2);
  await views.drain();
  assert.equal(await countOf(store, 'Burnt00001'), 2);
  const [row] = await sql`select view_count::int as n from pastes where hash = 'Burnt00001'`;
  assert.equal(row?.['n'], 2, "the tombstone's row holds its whole count");
});
