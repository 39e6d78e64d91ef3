import { pasteRecord } from '../helpers/paste-record.ts';
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import type { Sql } from 'postgres';
import { parseConfig } from '../../src/config.ts';
import { type Database, openDatabase } from '../../src/pg/connect.ts';
import { migrate } from '../../src/pg/migrate.ts';
import { PgOwnerLists } from '../../src/pg/owner-lists.ts';
import { PgPasteStore } from '../../src/pg/pastes.ts';
import { PgRecentList } from '../../src/pg/recent.ts';
import type { Paste } from '../../src/paste/paste.ts';
import type { Listing } from '../../src/paste/repository.ts';
import { createTestDatabase } from '../helpers/postgres.ts';

const opened: Database[] = [];
after(() => Promise.all(opened.map((d) => d.close())));

async function fresh(): Promise<{ sql: Sql; store: PgPasteStore }> {
  const db = await openDatabase(parseConfig({ DATABASE_URL: await createTestDatabase(), DATABASE_WAIT_SECONDS: '5' }));
  opened.push(db);
  await migrate(db.sql);
  return { sql: db.sql, store: new PgPasteStore(db.sql) };
}

const T0 = 1_700_000_000_000;

const record = (hash: string, over: Partial<Paste> = {}): Paste =>
  pasteRecord(hash, { created_at: T0, updated_at: T0, ...over });

test("an owner's list is their pastes, newest first, those of one millisecond in the order they were made", async () => {
  const { sql, store } = await fresh();
  const owners = new PgOwnerLists(sql);
  const listing = (userId: number): Listing => ({
    add: (p) => owners.add(userId, p.hash),
    withdraw: (p) => owners.remove(userId, p.hash),
  });
  const make = (hash: string, owner: number, at: number) =>
    store.create(() => record(hash, { owner_id: owner, created_at: at, updated_at: at }), listing(owner));
  await make('FirstA0001', 1, T0);
  await make('SameB00001', 1, T0 + 5);
  await make('SameC00001', 1, T0 + 5);
  await make('Theirs0001', 2, T0 + 6);
  await make('SameD00001', 1, T0 + 5);
  await make('Older00001', 1, T0 - 10);
  assert.deepEqual(await owners.list(1), ['SameD00001', 'SameC00001', 'SameB00001', 'FirstA0001', 'Older00001']);
  assert.equal(await owners.count(1), 5);
  assert.deepEqual(await owners.list(2), ['Theirs0001']);
  assert.equal(await owners.count(2), 1);
  assert.deepEqual(await owners.list(3), []);
  assert.equal(await owners.count(3), 0);

  // The rows are the list: a deleted paste leaves it, whatever `remove` is told, and `add` makes no entry.
  await store.transact('SameC00001', () => ({ result: null, next: 'delete' as const }));
  assert.deepEqual(await owners.list(1), ['SameD00001', 'SameB00001', 'FirstA0001', 'Older00001']);
  await owners.add(1, 'Nothing001');
  await owners.remove(1, 'FirstA0001');
  assert.equal(await owners.count(1), 4);
});

test('the recent list: the newest public pastes that are not one-time ones, bounded, read from the rows', async () => {
  const { sql, store } = await fresh();
  const make = (hash: string, over: Partial<Paste>) => store.create(() => record(hash, over));
  await make('Pub1aaaaaa', { created_at: T0 + 1 });
  await make('Pub2aaaaaa', { created_at: T0 + 2 });
  await make('Privat0001', { created_at: T0 + 3, privacy: 'private' });
  await make('Unlist0001', { created_at: T0 + 4, privacy: 'unlisted' });
  await make('OneTim0001', { created_at: T0 + 5, burn_after_read: 1 });
  await make('Pub3aaaaaa', { created_at: T0 + 6 });
  await make('Pub4aaaaaa', { created_at: T0 + 6 });
  await make('Pub5aaaaaa', { created_at: T0 + 7, password: '$scrypt$x' });

  const recent = new PgRecentList(sql, 4);
  assert.deepEqual(recent.list(), []);
  await recent.load();
  // A paste with a password is on the list, as a create puts it there; the reader skips it.
  assert.deepEqual(recent.list(), ['Pub5aaaaaa', 'Pub4aaaaaa', 'Pub3aaaaaa', 'Pub2aaaaaa']);

  // Between loads the list is kept in memory, as the file store's is.
  recent.add('Pub1aaaaaa');
  recent.remove('Pub4aaaaaa');
  assert.deepEqual(recent.list(), ['Pub1aaaaaa', 'Pub5aaaaaa', 'Pub3aaaaaa']);
  recent.add('Pub3aaaaaa');
  assert.deepEqual(recent.list(), ['Pub3aaaaaa', 'Pub1aaaaaa', 'Pub5aaaaaa']);
  await recent.save();

  // A change made while a load's query runs is made again on what it read.
  await make('Pub6aaaaaa', { created_at: T0 + 8 });
  const loading = recent.load();
  recent.add('Pub1aaaaaa');
  recent.remove('Pub5aaaaaa');
  await loading;
  assert.deepEqual(recent.list(), ['Pub1aaaaaa', 'Pub6aaaaaa', 'Pub4aaaaaa']);

  // Another server's list, loaded afresh, agrees once the rows do.
  const other = new PgRecentList(sql);
  await other.load();
  assert.deepEqual(other.list(), ['Pub6aaaaaa', 'Pub5aaaaaa', 'Pub4aaaaaa', 'Pub3aaaaaa', 'Pub2aaaaaa', 'Pub1aaaaaa']);
});
