import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseConfig } from '../../src/config.ts';
import { type Database, openDatabase } from '../../src/pg/connect.ts';
import { migrate } from '../../src/pg/migrate.ts';
import { SharedPasteCache, TRUST_MS } from '../../src/pg/paste-cache.ts';
import { PgPasteStore } from '../../src/pg/pastes.ts';
import { PgViewCounts } from '../../src/pg/views.ts';
import { encodeContent, NO_CONTENT, type Paste } from '../../src/paste/paste.ts';
import type { SharedCacheOptions } from '../../src/pg/paste-cache.ts';
import { pasteRecord } from '../helpers/paste-record.ts';
import { createTestDatabase } from '../helpers/postgres.ts';
import { makeToken, req, startServer } from '../helpers/server.ts';
import { until } from '../helpers/until.ts';

const opened: { close(): Promise<void> }[] = [];
after(async () => {
  for (const o of opened.reverse()) await o.close();
});

async function open(url: string): Promise<Database> {
  const db = await openDatabase(parseConfig({ DATABASE_URL: url, DATABASE_WAIT_SECONDS: '5' }));
  opened.push(db);
  return db;
}

/**
 * Two stores on one database, each on its own pool as two processes would be: `server`
 * listens (a running server), `other` does not (another server's writes, or the CLI's).
 */
async function pair(opts: SharedCacheOptions = {}) {
  const url = await createTestDatabase();
  const a = await open(url);
  await migrate(a.sql);
  const b = await open(url);
  const server = new PgPasteStore(a.sql, 1 << 20, opts);
  const other = new PgPasteStore(b.sql);
  opened.push(server);
  assert.equal(await server.listen(), true);
  return { server, other, a, b };
}

const record = pasteRecord;

/** A read as the paste service makes it: the cache first, else the database. */
const read = async (store: PgPasteStore, hash: string): Promise<Paste | null> => {
  const hit = store.cached(hash);
  return hit !== undefined ? hit : store.get(hash);
};

/** Reads until `seen` holds, answering how long that took (ms); fails past `limitMs`. */
function within(limitMs: number, store: PgPasteStore, hash: string, seen: (p: Paste | null) => boolean) {
  return until(async () => seen(await read(store, hash)), {
    timeoutMs: limitMs,
    what: `the change to ${hash}`,
    everyMs: 2,
  });
}

/** Makes a paste on `other` and warms `server`'s cache with it. */
async function warm(server: PgPasteStore, other: PgPasteStore, over: Partial<Paste> = {}): Promise<Paste> {
  const p = await other.create((h) => record(h, over));
  await server.get(p.hash);
  assert.equal(server.cached(p.hash), await server.get(p.hash), 'cached');
  return p;
}

const change = (store: PgPasteStore, hash: string, fn: (p: Paste) => Paste | 'delete') =>
  store.transact(hash, (cur) => ({ result: null, next: fn(cur as Paste) }));

test('a listening store answers repeated reads from its cache, and its own pings keep it trusted', async () => {
  const { server, other } = await pair();
  const p = await other.create((h) => record(h));
  const before = server.cacheStats;
  assert.equal((await server.get(p.hash))?.hash, p.hash);
  for (let i = 0; i < 10; i++) assert.equal(server.cached(p.hash)?.hash, p.hash);
  // Past TRUST_MS the pings heard back still vouch for what is held: the store's own ping timer
  // against real time is the behaviour, so real time passes.
  await sleep(TRUST_MS + 300);
  assert.equal((await server.get(p.hash))?.hash, p.hash);
  const stats = server.cacheStats;
  assert.equal(stats.hits - before.hits, 11);
  assert.equal(stats.misses - before.misses, 1);
  assert.equal(stats.entries, 1);
  assert.ok(stats.bytes > 0);
});

test("another process's edit, privacy change, password change, burn and delete are seen within 1 second", async () => {
  const { server, other, b } = await pair();
  const took: Record<string, number> = {};

  const edited = await warm(server, other);
  await change(other, edited.hash, (p) => ({ ...p, content_json: encodeContent('second'), revision: 2 }));
  took['edit'] = await within(1_000, server, edited.hash, (p) => p?.revision === 2);

  const hidden = await warm(server, other);
  await change(other, hidden.hash, (p) => ({ ...p, privacy: 'private' }));
  took['privacy'] = await within(1_000, server, hidden.hash, (p) => p?.privacy === 'private');

  const locked = await warm(server, other);
  await change(other, locked.hash, (p) => ({ ...p, password: '$scrypt$x' }));
  took['password'] = await within(1_000, server, locked.hash, (p) => p?.password === '$scrypt$x');

  const burned = await warm(server, other, { burn_after_read: 1 });
  await change(other, burned.hash, (p) => ({ ...p, burned: true, content_json: NO_CONTENT }));
  took['burn'] = await within(1_000, server, burned.hash, (p) => p?.burned === true);

  const deleted = await warm(server, other);
  await change(other, deleted.hash, () => 'delete');
  took['delete'] = await within(1_000, server, deleted.hash, (p) => p === null);

  // An operator's own SQL (or any writer that bypasses the store) is announced by the trigger too.
  const bySql = await warm(server, other);
  await b.sql`update pastes set title = 'by hand' where hash = ${bySql.hash}`;
  took['sql'] = await within(1_000, server, bySql.hash, (p) => p?.title === 'by hand');
  assert.ok(
    Object.values(took).every((ms) => ms < 1_000),
    JSON.stringify(took),
  );
});

test('with the listener down the cache is dropped and bypassed: every read asks the database', async () => {
  const { server, other } = await pair();
  const p = await warm(server, other);
  await server.unlisten();
  assert.equal(server.cached(p.hash), undefined);
  assert.equal(server.cacheStats.entries, 0);
  // Nothing announced reaches it now, yet the next read sees the change at once.
  await change(other, p.hash, (x) => ({ ...x, title: 'unheard' }));
  assert.equal((await server.get(p.hash))?.title, 'unheard');
  const hits = server.cacheStats.hits;
  await server.get(p.hash);
  assert.equal(server.cached(p.hash), undefined);
  assert.equal(server.cacheStats.hits, hits, 'no hit while bypassed');

  // Listening again, it caches again.
  assert.equal(await server.listen(), true);
  await server.get(p.hash);
  assert.equal(server.cached(p.hash)?.title, 'unheard');
});

test('a change announced while the listen connection is cut is still seen within 1 second', async () => {
  const { server, other, b } = await pair();
  const p = await warm(server, other);
  const cut = await b.sql`select pg_terminate_backend(pid) as done from pg_stat_activity
    where datname = current_database() and query ilike 'listen%'`;
  assert.equal(cut.length, 1, 'the listen connection was found');
  // Its announcement goes nowhere: nobody listens until the driver reconnects.
  await change(other, p.hash, (x) => ({ ...x, title: 'while cut' }));
  const took = await within(1_000, server, p.hash, (x) => x?.title === 'while cut');
  assert.ok(took < 1_000, `${took} ms`);
});

test('a cache whose own ping is not heard back within TRUST_MS is dropped and bypassed', async () => {
  let now = 0;
  // No ping is sent in this test: only LISTEN taking effect vouches for the cache.
  const { server, other } = await pair({ clock: () => now, pingMs: 3_600_000 });
  const p = await warm(server, other);
  now += TRUST_MS;
  assert.equal(server.cached(p.hash)?.hash, p.hash);
  now += 1;
  assert.equal(server.cached(p.hash), undefined);
  assert.equal(server.cacheStats.entries, 0);
  await server.get(p.hash);
  assert.equal(server.cacheStats.entries, 0, 'what is read meanwhile is not kept');
});

test('a read that a change overtakes is not kept, and concurrent reads of one paste share one query', async () => {
  const url = await createTestDatabase();
  const db = await open(url);
  const cache = new SharedPasteCache(db.sql, 1 << 20);
  opened.push(cache);
  assert.equal(await cache.start(), true);
  const p = record('AbCdEf0123');
  let release: (v: Paste) => void = () => undefined;
  let loads = 0;
  const load = () => {
    loads++;
    return new Promise<Paste | null>((resolve) => (release = resolve));
  };
  const first = cache.get(p.hash, load);
  const second = cache.get(p.hash, load);
  cache.forget(p.hash);
  release(p);
  assert.equal(await first, p);
  assert.equal(await second, p);
  assert.equal(loads, 1);
  assert.equal(cache.cached(p.hash), undefined, 'what it read may predate the change');

  const next = cache.get(p.hash, load);
  release(p);
  await next;
  assert.equal(cache.cached(p.hash), p);
});

test("views folded in take their new count in the cache, this server's at once, another's within 1 second", async () => {
  const { server, other, a, b } = await pair();
  const p = await warm(server, other);
  const copy = server.cached(p.hash) as Paste;
  const views = new PgViewCounts(a.sql, server);
  const shown = (x: Paste) => x.view_count + views.pending(x.hash, x.view_count);
  assert.equal(views.add(p.hash, copy.view_count), 1);
  const misses = server.cacheStats.misses;
  await views.drain();
  // No count goes backwards between the fold and its announcement, and nothing is read again.
  assert.equal(server.viewCount(p.hash), 1);
  assert.equal(shown(server.cached(p.hash) as Paste), 1);
  assert.equal(views.add(p.hash, copy.view_count), 2, 'a view counted on the copy as read counts the fold too');

  const elsewhere = new PgViewCounts(b.sql);
  elsewhere.add(p.hash, 2);
  elsewhere.add(p.hash, 2);
  await elsewhere.drain();
  // Ours is pending over a row that another's fold moved past it: the row's count is shown.
  await within(1_000, server, p.hash, (x) => x !== null && shown(x) === 3);
  assert.equal(server.cacheStats.misses, misses, 'the counts came with the announcements');
  assert.equal(server.cached(p.hash), copy, 'the copy read first is still the one served');

  // A server of the version before announces a row at a time; its counts arrive as well.
  await b.sql.begin(async (tx) => {
    await tx`select set_config('pastebin.view_fold', 'on', true)`;
    await tx`update pastes set view_count = view_count + 4 where hash = ${p.hash}`;
  });
  await within(1_000, server, p.hash, () => server.viewCount(p.hash) === 7);
  assert.equal(server.cacheStats.misses, misses);
  assert.equal(server.cached(p.hash), copy);
  // Counts only grow: an announcement of an earlier fold, arriving late, changes nothing.
  server.recount(p.hash, 3);
  assert.equal(server.viewCount(p.hash), 7);
  await views.drain();
  assert.equal(server.viewCount(p.hash), 8, "our pending view, folded at last, on top of the others'");
  assert.equal((await other.get(p.hash))?.view_count, 8);
  assert.equal(shown(copy), 8);
});

test('a fold of hundreds of pastes announces every new count, a few hundred to a notification', async () => {
  const { server, other, a, b } = await pair();
  const made: Paste[] = [];
  for (let i = 0; i < 600; i++) made.push(await warm(server, other));
  // Heard on the server's own listen connection, beside its cache.
  const heard: string[] = [];
  await a.sql.listen('pastes', (payload) => void heard.push(payload));
  const elsewhere = new PgViewCounts(b.sql);
  for (const [i, p] of made.entries()) for (let k = 0; k <= i % 3; k++) elsewhere.add(p.hash, p.view_count);
  await elsewhere.drain();
  for (const [i, p] of made.entries())
    await within(1_000, server, p.hash, () => server.viewCount(p.hash) === p.view_count + 1 + (i % 3));
  // The cache and this listener are told in turn; wait a moment for this one all the same.
  const folded = () => heard.filter((h) => h.startsWith('+'));
  await until(() => folded().length >= 3, { what: 'three fold announcements on this listener' });
  const folds = folded();
  assert.deepEqual(
    folds.map((f) => f.split(' ').length / 2),
    [250, 250, 100],
  );
  assert.ok(folds.every((f) => Buffer.byteLength(f) < 8_000));
  assert.equal(heard.filter((h) => !h.startsWith('~')).length, folds.length, 'nothing a row at a time (pings aside)');
});

test('a one-time paste read through two servers on one database goes to exactly one reader', async () => {
  const s1 = await startServer();
  const s2 = await startServer({ dataDir: s1.dataDir });
  const token = await makeToken(s1.dataDir, { user: 'alice' });
  const made = await req(s1, 'POST', '/api/v1/paste_create.php', {
    token,
    body: { content: 'once', burn_after_read: 1 },
  });
  const hash = made.json?.['hash'] as string;
  // Both servers hold it in their caches first (a HEAD reads it and burns nothing).
  for (const s of [s1, s2]) assert.equal((await req(s, 'HEAD', `/api/v1/raw.php?hash=${hash}`, { token })).status, 200);
  const got = await Promise.all(
    [s1, s2, s1, s2, s1, s2].map((s) => req(s, 'GET', `/api/v1/raw.php?hash=${hash}`, { token })),
  );
  assert.deepEqual(
    got.filter((r) => r.status === 200).map((r) => r.text),
    ['once'],
  );
  assert.ok(
    got.every((r) => r.status === 200 || r.status === 410),
    JSON.stringify(got.map((r) => r.status)),
  );
});
