import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import postgres from 'postgres';
import { OWNED_SEARCHES_PER_USER } from '../../src/paste/owned-search.ts';
import { OWNED_SEARCH_MS } from '../../src/paste/service.ts';
import { createTestDatabase } from '../helpers/postgres.ts';
import { type AppServer, startServer } from '../helpers/server.ts';
import { registerAll, type WebClient } from '../helpers/web-client.ts';

/** Pastes of the searching user: enough that reading them all takes several times the search's time. */
const MANY = 100_000;
const DOTTED = `/my?q=${encodeURIComponent('\u0130'.repeat(200))}`;

let s: AppServer;
let url: string;
let sql: postgres.Sql;
let carol: WebClient;
let dave: WebClient;

before(async () => {
  url = await createTestDatabase();
  sql = postgres(url, { max: 2, onnotice: () => {} });
  s = await startServer({ env: { DATABASE_URL: url, OPEN_REGISTRATION: '1' } });
  [carol, dave] = await registerAll(s, 'carol', 'dave');
  const [row] = await sql`select id from users where name = 'carol'`;
  await sql`insert into pastes (hash, owner_id, privacy, created_at, updated_at, language, title, highlight,
      burn_after_read, content_json)
    select lpad(i::text, 6, '0') || 'Many', ${row?.['id'] as number}, 'private',
      '2024-01-01T00:00:00Z'::timestamptz + i * interval '1 second', now(), 'text', 'note ' || i, true, false,
      to_json('Istanbul, line ' || i)::text
    from generate_series(1, ${MANY}) i`;
  await sql`vacuum analyze pastes`;
});
after(() => sql.end());

test('My pastes answers a search for 200 × U+0130 within its time, for a user with many pastes', async () => {
  const started = performance.now();
  const r = await carol.get(DOTTED);
  const took = performance.now() - started;
  assert.equal(r.status, 200);
  // Either it read them all in time and found none, or it says how far it got.
  assert.match(r.text, /0 pastes found|The search stopped after your newest \d+ of 100000 pastes/);
  assert.ok(took < OWNED_SEARCH_MS + 2_000, `answered after ${took.toFixed(0)} ms`);
  // The search box holds what was searched: the words cut to 200 units once lowercased.
  assert.match(r.text, new RegExp(`value="${'\u0130'.repeat(100)}"`));
});

test('a user runs two searches at once: a third is refused with 429, and the two stop within their time', async () => {
  // A lock on the pastes holds each search's queries until its time is up, so the two surely run at once.
  let release: () => void = () => {};
  const released = new Promise<void>((r) => {
    release = r;
  });
  const held = sql.begin(async (tx) => {
    await tx`lock table pastes in access exclusive mode`;
    await released;
  });
  const watcher = postgres(url, { max: 1, onnotice: () => {} });
  try {
    const started = performance.now();
    const running = Array.from({ length: OWNED_SEARCHES_PER_USER }, () => carol.get('/my?q=line'));
    // Each search's queries are ended by their statement_timeout within its second; then, to
    // say how far it got, it counts the user's pastes, which waits on the lock until it goes.
    for (;;) {
      const [row] = await watcher`select count(*)::int as n from pg_stat_activity
        where wait_event_type = 'Lock' and query like 'select count(*)::int as of%'`;
      if (row?.['n'] === OWNED_SEARCHES_PER_USER) break;
      assert.ok(performance.now() - started < 15_000, 'the searches were not stopped');
      await new Promise((r) => setImmediate(r));
    }
    assert.ok(performance.now() - started >= OWNED_SEARCH_MS);
    const third = await carol.get('/my?q=line');
    assert.equal(third.status, 429);
    assert.equal(third.headers['retry-after'], '1');
    assert.match(third.text, /You already have searches running/);
    release();
    await held;
    for (const r of await Promise.all(running)) {
      assert.equal(r.status, 200);
      assert.match(r.text, /The search stopped after your newest 0 of 100000 pastes/);
    }
    // Their places are free again, and another user's were never taken.
    assert.equal((await carol.get('/my?q=line%2099999')).status, 200);
    assert.equal((await dave.get('/my?q=line')).status, 200);
  } finally {
    release();
    await watcher.end();
  }
});
