import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import type { Sql } from 'postgres';
import { parseConfig } from '../../src/config.ts';
import { type Database, openDatabase } from '../../src/pg/connect.ts';
import { migrate } from '../../src/pg/migrate.ts';
import { PgPasteStore } from '../../src/pg/pastes.ts';
import { PgViewCounts } from '../../src/pg/views.ts';
import { NO_CONTENT } from '../../src/paste/paste.ts';
import { pasteRecord } from '../helpers/paste-record.ts';
import { createTestDatabase } from '../helpers/postgres.ts';

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

const countOf = async (store: PgPasteStore, hash: string): Promise<number | undefined> =>
  (await store.get(hash))?.view_count;

test('views are counted in memory and folded into the rows: each answer counts what the row does not hold yet', async () => {
  const { store, sql } = await fresh();
  await store.create(() => record('ViewsA0001', { view_count: 10 }));
  await store.create(() => record('ViewsB0001'));
  const views = new PgViewCounts(sql);
  assert.equal(views.add('ViewsA0001', 10), 1);
  assert.equal(views.add('ViewsA0001', 10), 2);
  assert.equal(views.add('ViewsB0001', 0), 1);
  assert.equal(views.pending('ViewsA0001', 10), 2);
  assert.equal(views.pending('ViewsA0001', 12), 0, 'a row that already took them in gets none twice');
  assert.equal(views.pending('Nothing001', 5), 0);
  assert.equal(views.size, 2);

  await views.drain();
  assert.equal(await countOf(store, 'ViewsA0001'), 12);
  assert.equal(await countOf(store, 'ViewsB0001'), 1);
  assert.equal(views.size, 0);
  assert.equal(views.pending('ViewsA0001', 12), 0);
  // Nothing pending: a drain, or a save, changes nothing.
  await views.save();
  assert.equal(await countOf(store, 'ViewsA0001'), 12);
});

test("a count made while its fold waits stays pending over the row's new count", async () => {
  const { store, sql, url } = await fresh();
  await store.create(() => record('Waits00001', { view_count: 5 }));
  const views = new PgViewCounts(sql);
  views.add('Waits00001', 5);
  views.add('Waits00001', 5);
  // Another connection holds the row, so the fold waits for it.
  const other = await openDatabase(parseConfig({ DATABASE_URL: url, DATABASE_WAIT_SECONDS: '5' }));
  opened.push(other);
  let release = (): void => undefined;
  const held = other.sql.begin(async (tx) => {
    await tx`select 1 from pastes where hash = 'Waits00001' for update`;
    await new Promise<void>((resolve) => {
      release = resolve;
    });
  });
  await new Promise((resolve) => setTimeout(resolve, 50));
  const draining = views.drain();
  await new Promise((resolve) => setTimeout(resolve, 100));
  assert.equal(views.add('Waits00001', 5), 3, 'counted meanwhile');
  release();
  await held;
  await draining;
  assert.equal(await countOf(store, 'Waits00001'), 7);
  assert.equal(views.pending('Waits00001', 7), 1);
  await views.drain();
  assert.equal(await countOf(store, 'Waits00001'), 8);
  assert.equal(views.size, 0);
});

test('a burned or deleted paste takes no folded views, and its count is dropped', async () => {
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
  assert.equal(await countOf(store, 'Burned0001'), 1);
  assert.equal(await countOf(store, 'Living0001'), 1);
  assert.equal(views.size, 0);
});

test("a save asked for while a drain runs folds nothing twice; two servers' counts add up", async () => {
  const { sql } = await fresh();
  // More pastes than one statement folds.
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
  const [row] = await sql`select sum(view_count)::int as total, min(view_count)::int as least from pastes`;
  assert.equal(row?.['total'], n + Math.floor(n / 2) + n);
  assert.equal(row?.['least'], 2);
  assert.equal(a.size + b.size, 0);
});
