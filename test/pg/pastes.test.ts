import { pasteRecord } from '../helpers/paste-record.ts';
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import type { Sql } from 'postgres';
import { parseConfig } from '../../src/config.ts';
import { type Database, openDatabase } from '../../src/pg/connect.ts';
import { migrate } from '../../src/pg/migrate.ts';
import { PgPasteStore } from '../../src/pg/pastes.ts';
import { contentOf, encodeContent, NO_CONTENT, type Paste } from '../../src/paste/paste.ts';
import { TOMBSTONE_MS, type Txn } from '../../src/paste/repository.ts';
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

const record = (hash: string, content: string, over: Partial<Paste> = {}): Paste =>
  pasteRecord(hash, { content_json: encodeContent(content), created_at: T0, updated_at: T0, ...over });

test('every field of a paste comes back as it was stored, a receipt and U+0000 included, in one shape', async () => {
  const { store } = await fresh();
  const full = record('AbCdEf0123', 'a\u0000b \u{1F600} "quoted" \\ \n\u2028', {
    title: 'A title ✓',
    language: 'python',
    privacy: 'unlisted',
    highlight: 0,
    burn_after_read: 1,
    burned: true,
    password: '$scrypt$n=16384,r=8,p=1$c2FsdA$aGFzaA',
    owner_id: 42,
    created_at: T0,
    updated_at: T0 + 1,
    expire_at: T0 + 86_400_001,
    view_count: 9_007_199_254,
    receipt: { at: T0 + 1, via: 'api', token_id: 'tok_123' },
    revision: 7,
  });
  assert.equal(await store.create(() => full), full);
  const read = await store.get(full.hash);
  assert.deepEqual(read, full);
  assert.deepEqual(Object.keys(read ?? {}), Object.keys(full), 'the fields in the order a paste file is read in');
  assert.equal(contentOf(read as Paste), 'a\u0000b \u{1F600} "quoted" \\ \n\u2028');
  assert.deepEqual(await store.getByShortcode('AbCdEf'), full);
  assert.equal(await store.getByShortcode('abcdef'), null, 'short codes are case-sensitive');
  assert.equal(await store.get('AbCdEf9999'), null, 'the same short code under another hash is not the paste');

  // A record without the later fields reads as a paste file without them does: no receipt, revision 1.
  const { receipt: _r, revision: _v, ...old } = record('Old0000001', 'x');
  await store.create(() => old);
  assert.deepEqual(await store.get('Old0000001'), { ...old, receipt: null, revision: 1 });
  assert.equal(store.cached(full.hash), undefined, 'not listening, nothing is cached: every read asks the database');
  assert.equal(await store.removeDamaged(full.hash), null);
  assert.deepEqual(store.cacheStats, { hits: 0, misses: 3, bytes: 0, entries: 0 });
  assert.equal(store.commits, 2, 'the two creates');
});

test('create: a taken `first` hash or short code means another draw, and the listing follows', async () => {
  const { store } = await fresh();
  const listed: string[] = [];
  const withdrawn: string[] = [];
  const listing = {
    add: async (p: Paste) => void listed.push(p.hash),
    withdraw: async (p: Paste) => void withdrawn.push(p.hash),
  };
  const first = await store.create((h) => record(h, 'first'), listing, 'Taken00001');
  assert.equal(first.hash, 'Taken00001');

  // The same hash asked for again: a random one follows.
  const again = await store.create((h) => record(h, 'again'), listing, 'Taken00001');
  assert.notEqual(again.hash, 'Taken00001');
  assert.match(again.hash, /^[A-Za-z0-9]{10}$/);
  // Another hash with the taken short code: refused too.
  const twin = await store.create((h) => record(h, 'twin'), listing, 'Taken0zzzz');
  assert.notEqual(twin.hash.slice(0, 6), 'Taken0');

  assert.equal(contentOf((await store.get('Taken00001')) as Paste), 'first');
  assert.equal(contentOf((await store.get(again.hash)) as Paste), 'again');
  assert.equal(contentOf((await store.get(twin.hash)) as Paste), 'twin');
  assert.equal(await store.get('Taken0zzzz'), null);
  assert.deepEqual(listed, ['Taken00001', 'Taken00001', again.hash, 'Taken0zzzz', twin.hash]);
  assert.deepEqual(withdrawn, ['Taken00001', 'Taken0zzzz']);
});

test('create: a listing that cannot be written refuses the create, and the row goes again', async () => {
  const { store } = await fresh();
  let tried = '';
  await assert.rejects(
    store.create((h) => record((tried = h), 'refused'), {
      add: () => Promise.reject(new Error('list full')),
      withdraw: async () => undefined,
    }),
    /list full/,
  );
  assert.equal(await store.get(tried), null);
  // A row the database refuses (here: a hash the schema does not take) withdraws its entry.
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

/** An edit as the service makes one: the replaced version kept, the oldest beyond `max` dropped. */
const edit =
  (text: string, at: number, max = 3) =>
  (p: Paste | null): Txn<Paste> => {
    assert.ok(p !== null);
    const next = { ...p, content_json: encodeContent(text), updated_at: at, revision: (p.revision ?? 1) + 1 };
    const dropBelow = (p.revision ?? 1) + 1 - max;
    return { result: next, next, keep: p, ...(dropBelow > 1 ? { dropBelow } : {}) };
  };

test('transact keeps the replaced version, drops those below dropBelow, and the rest with dropRevisions', async () => {
  const { store } = await fresh();
  const p = await store.create((h) => record(h, 'one'));
  for (const [i, text] of ['twö', 'three', 'four', 'five'].entries())
    await store.transact(p.hash, edit(text, T0 + i + 1));
  const now = (await store.get(p.hash)) as Paste;
  assert.equal(now.revision, 5);
  assert.equal(contentOf(now), 'five');
  // MAX_REVISIONS 3: the three versions before the current one.
  assert.deepEqual(await store.revisions(p.hash), [2, 3, 4]);
  assert.deepEqual(await store.getRevision(p.hash, 3), {
    ...p,
    content_json: encodeContent('three'),
    updated_at: T0 + 2,
    revision: 3,
  });
  assert.equal(await store.getRevision(p.hash, 1), null);
  assert.deepEqual(await store.revisionFacts(p.hash, 4), { savedAt: T0 + 3, bytes: 4 });
  assert.equal(await store.revisionFacts(p.hash, 1), null);
  assert.deepEqual(await store.revisionFacts(p.hash, 2), { savedAt: T0 + 1, bytes: 4 });

  // A version kept again under its number replaces the one kept before.
  await store.transact(p.hash, (cur) => ({
    result: null,
    keep: { ...(cur as Paste), revision: 4, content_json: encodeContent('ü') },
  }));
  assert.deepEqual(await store.revisionFacts(p.hash, 4), { savedAt: T0 + 4, bytes: 2 });

  await store.transact(p.hash, (cur) => ({ result: null, next: cur as Paste, dropRevisions: true }));
  assert.deepEqual(await store.revisions(p.hash), []);

  // A delete takes the paste and its kept versions.
  await store.transact(p.hash, edit('six', T0 + 10));
  assert.deepEqual(await store.revisions(p.hash), [5]);
  const gone = await store.transact(p.hash, (cur) => ({ result: cur, next: 'delete' as const }));
  assert.equal(gone?.revision, 6);
  assert.equal(await store.get(p.hash), null);
  assert.deepEqual(await store.revisions(p.hash), []);
  assert.equal(await store.getRevision(p.hash, 5), null);
});

test('transact: onCommit runs once committed, before the answer; a change the database refuses changes nothing', async () => {
  const { store } = await fresh();
  const p = await store.create((h) => record(h, 'kept'));
  const order: string[] = [];
  const result = await store.transact(p.hash, (cur) => ({
    result: 'done',
    next: { ...(cur as Paste), title: 'new' },
    onCommit: () => void order.push('commit'),
  }));
  order.push(result);
  assert.deepEqual(order, ['commit', 'done']);
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
  assert.deepEqual(order, ['commit', 'done']);
  assert.equal(((await store.get(p.hash)) as Paste).title, 'new');
  assert.deepEqual(await store.revisions(p.hash), []);
  await assert.rejects(
    store.transact(p.hash, () => {
      throw new Error('no');
    }),
    /no/,
  );
  // The durable writes /metrics counts: the create and the edit; not what was refused, nor a look that changed nothing.
  await store.transact(p.hash, (cur) => ({ result: cur }));
  assert.equal(store.commits, 2);
});

test('20 concurrent reads of a one-time paste: exactly one gets the content, each sees the one before', async () => {
  const { store } = await fresh();
  const p = await store.create((h) => record(h, 'secret', { burn_after_read: 1 }));
  const burn = (i: number) =>
    store.transact(p.hash, (cur): Txn<string | null> => {
      if (cur === null || cur.burned) return { result: null };
      return {
        result: contentOf(cur),
        next: {
          ...cur,
          content_json: NO_CONTENT,
          burned: true,
          view_count: cur.view_count + 1,
          updated_at: T0 + i,
          receipt: { at: T0 + i, via: 'web', token_id: null },
        },
        sweepAt: T0 + i + TOMBSTONE_MS,
        dropRevisions: true,
      };
    });
  const got = await Promise.all(Array.from({ length: 20 }, (_, i) => burn(i)));
  assert.deepEqual(
    got.filter((g) => g !== null),
    ['secret'],
  );
  const after = (await store.get(p.hash)) as Paste;
  assert.equal(after.burned, true);
  assert.equal(after.content_json, NO_CONTENT);
  assert.equal(after.view_count, 1);

  // Each transaction sees the outcome of the one before: 20 increments make 20.
  const q = await store.create((h) => record(h, 'counted'));
  await Promise.all(
    Array.from({ length: 20 }, () =>
      store.transact(q.hash, (cur) => ({
        result: null,
        next: { ...(cur as Paste), view_count: (cur as Paste).view_count + 1 },
      })),
    ),
  );
  assert.equal(((await store.get(q.hash)) as Paste).view_count, 20);
});

test('transactions on a paste that has no row run one after another too', async () => {
  const { sql, store } = await fresh();
  // Every connection of the pool opened first, so the transactions below do run at once.
  await Promise.all(Array.from({ length: 10 }, () => sql`select pg_sleep(0.05)`));
  const seen: (string | null)[] = [];
  await Promise.all(
    Array.from({ length: 5 }, (_, i) =>
      store.transact('Missing001', async (cur) => {
        seen.push(cur === null ? null : contentOf(cur));
        // Each decision takes a while: without the hash's lock, the others would decide meanwhile.
        await new Promise((resolve) => setTimeout(resolve, 30));
        return cur === null ? { result: null, next: record('Missing001', `made by ${i}`) } : { result: null };
      }),
    ),
  );
  assert.equal(seen.filter((s) => s === null).length, 1, 'one made it, the others found it');
  assert.equal(seen.length, 5);
  // A delete, then transactions that find nothing.
  await store.transact('Missing001', () => ({ result: null, next: 'delete' as const }));
  assert.deepEqual(await store.transact('Missing001', (cur) => ({ result: cur })), null);
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
