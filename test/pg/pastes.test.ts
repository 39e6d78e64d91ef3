import { pasteRecord } from '../helpers/paste-record.ts';
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import type { Sql } from 'postgres';
import { parseConfig } from '../../src/config.ts';
import { type Database, openDatabase } from '../../src/pg/connect.ts';
import { migrate } from '../../src/pg/migrate.ts';
import { PgPasteStore } from '../../src/pg/pastes.ts';
import { contentOf, encodeContent, NO_CONTENT, type Paste } from '../../src/paste/paste.ts';
import { TOMBSTONE_MS } from '../../src/paste/repository.ts';
import { createTestDatabase } from '../helpers/postgres.ts';

const opened: Database[] = [];
after(() => Promise.all(opened.map((d) => d.close())));

/** A fresh database with the schema, and a store on it. */
async function fresh(): Promise<{ sql: Sql; store: PgPasteStore }> {
  const db = await openDatabase(parseConfig({ DATABASE_URL: await createTestDatabase(), DATABASE_WAIT_SECONDS: '5' }));
  opened.push(db);
  await migrate(db.sql);
  return { sql: db.sql, store: new PgPasteStore(db.sql) };
}

const T0 = 1_700_000_000_123;
// What every backend does with pastes is test/contract/paste-repository.ts; here, the database's own.

const record = (hash: string, content: string, over: Partial<Paste> = {}): Paste =>
  pasteRecord(hash, { content_json: encodeContent(content), created_at: T0, updated_at: T0, ...over });

test('not listening, nothing is cached: every read asks the database, and each create is a commit', async () => {
  const { store } = await fresh();
  const full = await store.create(() => record('AbCdEf0123', 'x'));
  await store.create(() => record('Old0000001', 'x'));
  assert.deepEqual(await store.get(full.hash), full);
  assert.equal(store.cached(full.hash), undefined);
  assert.notEqual(await store.get('Old0000001'), null);
  assert.equal(await store.removeDamaged(full.hash), null, 'a row is never damaged');
  assert.deepEqual(store.cacheStats, { hits: 0, misses: 2, bytes: 0, entries: 0 });
  assert.equal(store.commits, 2, 'the two creates');
});

test('create: a row the database refuses withdraws its listing entry', async () => {
  const { store } = await fresh();
  // Here: a hash the schema does not take.
  const withdrawn: string[] = [];
  await assert.rejects(
    store.create(
      (h) => record(h, 'x'),
      { add: async () => undefined, withdraw: async (p) => void withdrawn.push(p.hash) },
      'bad-hash!!',
    ),
    (err) => (err as { code?: string }).code === '23514',
  );
  assert.deepEqual(withdrawn, ['bad-hash!!']);
});

test('transact: a change the database refuses changes nothing, and counts no commit', async () => {
  const { store } = await fresh();
  const p = await store.create((h) => record(h, 'kept'));
  const order: string[] = [];
  await store.transact(p.hash, (cur) => ({ result: null, next: { ...(cur as Paste), title: 'new' } }));
  // The kept version is written first, then the row is refused: neither stays, onCommit never runs.
  await assert.rejects(
    store.transact(p.hash, (cur) => ({
      result: null,
      keep: cur as Paste,
      next: { ...(cur as Paste), title: 'never', privacy: 'secret' as never, revision: 2 },
      onCommit: () => void order.push('wrong'),
    })),
    (err) => (err as { code?: string }).code === '23514',
  );
  assert.deepEqual(order, []);
  assert.equal(((await store.get(p.hash)) as Paste).title, 'new');
  assert.deepEqual(await store.revisions(p.hash), []);
  // The durable writes /metrics counts: the create and the edit; not what was refused, nor a look that changed nothing.
  await store.transact(p.hash, (cur) => ({ result: cur }));
  assert.equal(store.commits, 2);
});

/** When the sweep will next look at each paste (epoch ms), by hash. */
const sweepTimes = async (sql: Sql): Promise<Record<string, number | null>> =>
  Object.fromEntries(
    (await sql`select hash, (extract(epoch from sweep_at) * 1000)::float8 as at from pastes order by hash`).map((r) => [
      r['hash'],
      r['at'],
    ]),
  );

test('the sweep wipes expired pastes into tombstones and deletes old tombstones, in slices', async () => {
  const { sql, store } = await fresh();
  const HOUR = 3_600_000;
  const made = async (hash: string, over: Partial<Paste>) => store.create(() => record(hash, `text of ${hash}`, over));
  await made('ExpOne0001', { expire_at: T0 + HOUR, title: 'gone soon', password: '$scrypt$x' });
  await made('ExpTwo0002', { expire_at: T0 + 2 * HOUR });
  await made('ExpThr0003', { expire_at: T0 + 3 * HOUR });
  await made('Later00001', { expire_at: T0 + 100 * HOUR });
  await made('Foreve0001', {});
  // A burned paste's tombstone, and an old one whose time has come.
  await made('BurnOn0001', { burned: true, burn_after_read: 1, content_json: NO_CONTENT, updated_at: T0 });
  await made('BurnTw0002', {
    burned: true,
    burn_after_read: 1,
    content_json: NO_CONTENT,
    updated_at: T0 - TOMBSTONE_MS,
  });
  // Kept revisions go with an expired paste.
  await store.transact('ExpOne0001', (cur) => ({ result: null, keep: cur as Paste }));
  assert.deepEqual(await store.revisions('ExpOne0001'), [1]);
  assert.deepEqual(await sweepTimes(sql), {
    BurnOn0001: T0 + TOMBSTONE_MS,
    BurnTw0002: T0,
    ExpOne0001: T0 + HOUR,
    ExpTwo0002: T0 + 2 * HOUR,
    ExpThr0003: T0 + 3 * HOUR,
    Foreve0001: null,
    Later00001: T0 + 100 * HOUR,
  });

  const now = T0 + 4 * HOUR;
  // Four are due: a slice of two, another of two that may have left some, then one that finds none.
  assert.deepEqual(await store.sweepSlice(now, 2), { changed: 2, more: true });
  assert.deepEqual(await store.sweepSlice(now, 2), { changed: 2, more: true });
  assert.deepEqual(await store.sweepSlice(now, 2), { changed: 0, more: false });
  assert.deepEqual(store.sweepStats, { wiped: 3, removed: 1 });

  assert.equal(await store.get('BurnTw0002'), null);
  const wiped = (await store.get('ExpOne0001')) as Paste;
  assert.deepEqual(wiped, {
    ...record('ExpOne0001', ''),
    content_json: NO_CONTENT,
    title: '',
    password: null,
    expire_at: T0 + HOUR,
    updated_at: now,
  });
  assert.deepEqual(await store.revisions('ExpOne0001'), []);
  assert.equal(contentOf((await store.get('Later00001')) as Paste), 'text of Later00001');
  assert.equal(((await store.get('BurnOn0001')) as Paste).burned, true);

  // The tombstones are looked at again when they are old enough to go, and then go.
  const times = await sweepTimes(sql);
  assert.equal(times['ExpOne0001'], now + TOMBSTONE_MS);
  // A millisecond early, the new tombstones stay; the burned one goes, and Later00001 expired meanwhile.
  assert.deepEqual(await store.sweepSlice(now + TOMBSTONE_MS - 1, 10), { changed: 2, more: false });
  assert.equal(await store.get('BurnOn0001'), null);
  assert.equal(((await store.get('Later00001')) as Paste).content_json, NO_CONTENT);
  assert.equal(((await store.get('ExpTwo0002')) as Paste).content_json, NO_CONTENT);
  assert.deepEqual(await store.sweepSlice(now + TOMBSTONE_MS, 10), { changed: 3, more: false });
  assert.deepEqual(
    (await sql`select hash from pastes order by hash`).map((r) => r['hash']),
    ['Foreve0001', 'Later00001'],
  );
  assert.deepEqual(store.sweepStats, { wiped: 4, removed: 5 });
});

test('an edit moves the sweep time with the expiry; a visit that finds nothing due moves it on', async () => {
  const { sql, store } = await fresh();
  const HOUR = 3_600_000;
  const p = await store.create((h) => record(h, 'text', { expire_at: T0 + HOUR }));
  await store.transact(p.hash, (cur) => ({ result: null, next: { ...(cur as Paste), expire_at: T0 + 5 * HOUR } }));
  assert.deepEqual(await sweepTimes(sql), { [p.hash]: T0 + 5 * HOUR });
  // Asked to look earlier than the expiry: the sweep looks, finds nothing to do, and waits for the expiry.
  await store.transact(p.hash, (cur) => ({ result: null, next: cur as Paste, sweepAt: T0 + HOUR }));
  assert.deepEqual(await sweepTimes(sql), { [p.hash]: T0 + HOUR });
  assert.deepEqual(await store.sweepSlice(T0 + 2 * HOUR, 10), { changed: 0, more: false });
  assert.deepEqual(await sweepTimes(sql), { [p.hash]: T0 + 5 * HOUR });
  // No expiry: never looked at.
  await store.transact(p.hash, (cur) => ({ result: null, next: { ...(cur as Paste), expire_at: null } }));
  assert.deepEqual(await sweepTimes(sql), { [p.hash]: null });
  assert.deepEqual(await store.sweepSlice(T0 + 10 * HOUR, 10), { changed: 0, more: false });
  assert.equal(contentOf((await store.get(p.hash)) as Paste), 'text');
});
