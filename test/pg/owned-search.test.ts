import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, test } from 'node:test';
import postgres from 'postgres';
import { parseConfig } from '../../src/config.ts';
import { type Database, openDatabase } from '../../src/pg/connect.ts';
import { migrate } from '../../src/pg/migrate.ts';
import { likeTerms, MOST_TERMS, walkTerms } from '../../src/pg/owned-search-terms.ts';
import { INDEXED_TEXT_BYTES, PgOwnerLists } from '../../src/pg/owner-lists.ts';
import { PgPasteStore } from '../../src/pg/pastes.ts';
import { matchesOwned, type OwnedFilter } from '../../src/paste/owned-search.ts';
import type { SearchBound } from '../../src/paste/repository.ts';
import { encodeContent, type Paste } from '../../src/paste/paste.ts';
import { createTestDatabase, psql, testCluster } from '../helpers/postgres.ts';
import { pasteRecord } from '../helpers/paste-record.ts';
import { startServer } from '../helpers/server.ts';
import { createViaForm, registerAll } from '../helpers/web-client.ts';

const opened: Database[] = [];
after(() => Promise.all(opened.map((d) => d.close())));

const T0 = 1_700_000_000_000;

/** Every batch of a search's candidates, in one list. */
async function all<T>(batches: AsyncIterable<T[]>): Promise<T[]> {
  const out: T[] = [];
  for await (const b of batches) out.push(...b);
  return out;
}

/** A paste of user 1 (unless `over` says otherwise); hashes differ in their first six characters, the unique short code. */
const record = (hash: string, title: string, text: string, over: Partial<Paste> = {}): Paste =>
  pasteRecord(hash, { title, content_json: encodeContent(text), created_at: T0, updated_at: T0, ...over });

/** Titles and texts where a careless SQL search would differ from toLowerCase().includes(). */
const PASTES: [string, string][] = [
  ['Plain Title', 'plain text'],
  ['KELVIN', 'temperature 300 \u212A'],
  ['\u0130stanbul notes', 'STRASSE Stra\u00DFe'],
  ['quotes', 'say "hello" and \\back\\slash'],
  ['lines', 'first\nnew line\tTAB\u0001ctl'],
  ['percent', '100% of a_b'],
  ['greek', '\u03A3\u038A\u03A3\u03A5\u03A6\u039F\u03A3'],
  ['escape look-alikes', 'u0001 n and nt'],
  ['nothing special', 'Caf\u00C9 M\u00DCLLER'],
  ['without case', '\u65E5\u672C\u8A9E \u{1F600} \u2026 I\u0307 \u0130x'],
  ['\u0141\u00F3d\u017A', 'W \u0141\u00D3D\u0179 i \u01C5ungla, \u1E9E and \u{10400}'],
  ['dots', '\u0130\u0130 I\u0307\u0130 x\u0307\u0307 i\u0307\u0307 "\u0307 \u0130\u0307'],
];

const NEEDLES = [
  'plain',
  'PLAIN TEXT',
  'k',
  '300 k',
  'kelvin',
  'i\u0307stanbul',
  'istanbul',
  'i',
  '\u0130',
  'stra\u00DFe',
  'strasse',
  '"hello"',
  '\\back',
  'hello" and \\',
  'new line',
  'first\nnew',
  '\tTAB',
  'nt',
  'u0001',
  '\u0001',
  '100%',
  'a_b',
  '%',
  '_',
  '\u03C3\u03AF\u03C3',
  'caf\u00E9 m\u00FCller',
  'title',
  'e',
  'zzz',
  '\u65E5\u672C',
  '\u8A9E \u{1F600}',
  '\u{1F600} \u2026',
  '\u0307',
  'i\u0307 ',
  '\u0307x',
  '\u672C\u65E5',
  '\u0142\u00F3d\u017A',
  'w \u0142\u00F3d\u017A',
  '\u0141\u00F3D\u017A i',
  '\u00F3d',
  '\u01C6ungla',
  '\u01C4UNGLA',
  '\u00DF and',
  '\u{10428}',
  '\u03C3\u03AF\u03C3\u03C5\u03C6\u03BF\u03C2',
  '\u03C6\u03BF\u03C3',
  '\u03C2',
  '\u0131',
  '\u0130\u0130',
  'i\u0307i\u0307',
  '\u0130'.repeat(200),
  'x\u0307',
  'x\u0307\u0307',
  '\u0307\u0307',
  '"\u0307',
  'i\u0307 "',
  '\u0130\u0307',
  'i\u0307\u0307 ',
  'I\u0307\u0130 X',
];

test('a search on PostgreSQL finds exactly what toLowerCase().includes() finds, newest first', async () => {
  const db = await openDatabase(parseConfig({ DATABASE_URL: await createTestDatabase(), DATABASE_WAIT_SECONDS: '5' }));
  opened.push(db);
  await migrate(db.sql);
  const store = new PgPasteStore(db.sql);
  const owners = new PgOwnerLists(db.sql);
  const made: Paste[] = [];
  for (const [i, [title, text]] of PASTES.entries()) {
    const at = T0 + i;
    const p = record(`${String(i).padStart(6, '0')}Srch`, title, text, { created_at: at, updated_at: at });
    await store.create(() => p, { add: async () => {}, withdraw: async () => {} });
    made.push(p);
  }
  // Someone else's paste matches every word, and is never a candidate.
  await store.create(() => record('Other00001', PASTES.map((x) => x[0]).join(' '), 'plain', { owner_id: 2 }), {
    add: async () => {},
    withdraw: async () => {},
  });
  const newestFirst = [...made].reverse();
  // The index's few candidates read at once, and a broad search's walk a window at a time.
  const walking = new PgOwnerLists(db.sql, { few: 2, window: 2 });
  for (const lists of [owners, walking])
    for (const text of NEEDLES) {
      const filter: OwnedFilter = { text };
      const found = (await all(lists.candidates(1, filter))).filter((c) => matchesOwned(filter, c)).map((c) => c.hash);
      const expected = newestFirst.filter((p) => matchesOwned(filter, p)).map((p) => p.hash);
      assert.deepEqual(found, expected, JSON.stringify(text));
    }
  const both = await all(owners.candidates(1, { language: 'text', privacy: 'public' }));
  assert.equal(both.length, PASTES.length);
  assert.deepEqual(await all(owners.candidates(1, { language: 'go' })), []);
  assert.deepEqual(await all(owners.candidates(1, { privacy: 'private' })), []);
});

/** A database of 400 pastes of user 1 in one millisecond, two a microsecond; every third says Needle. */
async function walkable(): Promise<string> {
  const url = await createTestDatabase();
  const db = await openDatabase(parseConfig({ DATABASE_URL: url, DATABASE_WAIT_SECONDS: '5' }));
  opened.push(db);
  await migrate(db.sql);
  // Ordered by when they were made: a cursor that kept only milliseconds would lose its place.
  await db.sql`insert into pastes (hash, owner_id, privacy, created_at, updated_at, language, title, highlight,
      burn_after_read, content_json)
    select lpad(i::text, 6, '0') || 'Walk', 1, 'public', '2024-01-01T00:00:00Z'::timestamptz + (i / 2) * interval '1 microsecond',
      now(), 'text', 'walk ' || i, true, false, to_json(case when i % 3 = 0 then 'Needle ' || i else 'hay' end)::text
    from generate_series(1, 400) i order by i`;
  await db.sql`analyze pastes`;
  return url;
}

/** A pool on `url`, ended after the test; each query it sends is added to `sent`, when given. */
function postgresOf(url: string, sent?: string[], options: postgres.Options<Record<string, never>> = {}): postgres.Sql {
  const sql = postgres(url, {
    max: 2,
    onnotice: () => {},
    ...(sent === undefined ? {} : { debug: (_c: number, q: string) => void sent.push(q) }),
    ...options,
  });
  after(() => sql.end());
  return sql;
}

/** The needles' numbers, newest first: 399, 396, … */
const NEEDLES_NEWEST = Array.from({ length: 133 }, (_, i) => 399 - 3 * i);

test('a broad search walks the newest pastes first, a growing window at a time, and reads no further than asked', async () => {
  const url = await walkable();
  const sent: string[] = [];
  const watched = postgresOf(url, sent, { max: 1 });
  const lists = new PgOwnerLists(watched, { few: 5, window: 4 });
  const seen: number[] = [];
  for await (const batch of lists.candidates(1, { text: 'needle' })) {
    seen.push(...batch.map((c) => Number(c.hash.slice(0, 6))));
    if (seen.length >= 6) break;
  }
  // 133 hold the word, more than `few`: windows of the newest 4, 8 and 16 hold nine of them, and the search stops there.
  assert.deepEqual(seen, NEEDLES_NEWEST.slice(0, 9));
  // PostgreSQL expects more than `few` (the table is analyzed), so the index is not read;
  // the estimate is made for these words (a plan for any words reads the index whole).
  const explained = sent.findIndex((q) => q.startsWith('explain'));
  assert.match(sent[explained - 1] as string, /set local plan_cache_mode = force_custom_plan/);
  assert.equal(sent.filter((q) => q.includes('limit $')).length, 0);
  // Each window is its middle and its far end, from the owner's index, then its two halves' rows: six of each.
  assert.equal(sent.filter((q) => q.includes('offset $')).length, 6);
  assert.equal(sent.filter((q) => q.includes('offset 0')).length, 6);
  // Every one of them, walked to the end, is found in order.
  const every = (await all(lists.candidates(1, { text: 'NEEDLE' }))).map((c) => Number(c.hash.slice(0, 6)));
  assert.deepEqual(every, NEEDLES_NEWEST);
});

test('a walk told how many are wanted sends no more at once, and goes on where a half was cut', async () => {
  const lists = new PgOwnerLists(postgresOf(await walkable()), { few: 5, window: 4 });
  const batches: number[][] = [];
  for await (const batch of lists.candidates(1, { text: 'needle' }, 7)) {
    batches.push(batch.map((c) => Number(c.hash.slice(0, 6))));
    if (batches.flat().length >= 7) break;
  }
  // Windows of 4 and 8 hold one and three; of the next 16, the newer half holds the three still wanted.
  assert.deepEqual(batches, [[399], [396, 393, 390], [387, 384, 381]]);
  // Read on past what was wanted, every one comes, once and in order: the walk goes on from 381.
  const every = (await all(lists.candidates(1, { text: 'needle' }, 7))).map((c) => Number(c.hash.slice(0, 6)));
  assert.deepEqual(every, NEEDLES_NEWEST);
  const one = (await all(lists.candidates(1, { text: 'needle' }, 1))).map((c) => Number(c.hash.slice(0, 6)));
  assert.deepEqual(one, NEEDLES_NEWEST);
});

test('rows that may match but do not (encrypted envelopes) are passed in few steps, not one at a time', async () => {
  const url = await walkable();
  const sent: string[] = [];
  const pool = postgresOf(url, sent);
  // The newer third of the needles are encrypted: their text is an envelope, never searched,
  // though the database still finds the word in it.
  await pool`update pastes set encrypted = true where substr(hash, 1, 6)::int > 200 and substr(hash, 1, 6)::int % 3 = 0`;
  const lists = new PgOwnerLists(pool, { few: 5, window: 4 });
  const matched: number[] = [];
  for await (const batch of lists.candidates(1, { text: 'needle' }, 3)) {
    matched.push(...batch.filter((c) => matchesOwned({ text: 'needle' }, c)).map((c) => Number(c.hash.slice(0, 6))));
    if (matched.length >= 3) break;
  }
  assert.deepEqual(matched.slice(0, 3), [198, 195, 192]);
  // 67 envelopes before the first match: counted one a window, that would be 67 windows.
  const halves = sent.filter((q) => q.includes('offset 0')).length;
  assert.ok(halves <= 30, `${halves} halves read`);
});

test('a search PostgreSQL expects to be narrow reads the index, and one that is broad after all is walked', async () => {
  const url = await walkable();
  const sent: string[] = [];
  const pool = postgresOf(url, sent, { max: 1 });
  const lists = new PgOwnerLists(pool, { few: 5, window: 4 });
  // `needle 39`: 39 and 390 to 399, five, read by their hashes (four, then the fifth).
  const narrow = (await all(lists.candidates(1, { text: 'needle 39' }))).map((c) => Number(c.hash.slice(0, 6)));
  assert.deepEqual(narrow, [399, 396, 393, 390, 39]);
  assert.equal(sent.filter((q) => q.includes('limit $')).length, 1);
  assert.equal(sent.filter((q) => q.includes('hash = any(')).length, 2);
  assert.equal(sent.filter((q) => q.includes('offset 0')).length, 0);
  // Words the index holds no trigram of: PostgreSQL expects to read every one of the owner's
  // rows for them (told to plan as it does for a large table: a bitmap of the owner's rows,
  // then each row checked), so they are walked.
  const planned = postgresOf(url, sent, { connection: { enable_seqscan: 'off', enable_indexscan: 'off' } });
  sent.length = 0;
  assert.deepEqual(
    await all(new PgOwnerLists(planned, { few: 5, window: 4 }).candidates(1, { text: '\u65E5\u672C' })),
    [],
  );
  assert.equal(sent.filter((q) => q.includes('limit $')).length, 0);
  // All 400 rows: windows of 4, 8, 16, then 32, fifteen of them, each in two halves.
  assert.equal(sent.filter((q) => q.includes('offset 0')).length, 30);
  // `needle 3`, with statistics that know no such word: the index is read, finds more than
  // `few`, and the walk finds every one.
  const wrong = await createTestDatabase();
  const db = postgresOf(wrong);
  await migrate(db);
  await db`insert into pastes (hash, owner_id, privacy, created_at, updated_at, language, title, highlight,
      burn_after_read, content_json)
    select lpad(i::text, 6, '0') || 'Walk', 1, 'public', '2024-01-01T00:00:00Z'::timestamptz + i * interval '1 second',
      now(), 'text', 'walk ' || i, true, false, to_json('hay ' || i)::text
    from generate_series(1, 400) i order by i`;
  await db`alter table pastes set (autovacuum_enabled = false)`;
  await db`analyze pastes`;
  await db`update pastes set content_json = to_json('Needle ' || substr(hash, 1, 6)::int)::text
    where substr(hash, 1, 6)::int % 3 = 0`;
  sent.length = 0;
  const late = postgresOf(wrong, sent, { max: 1 });
  const broad = (await all(new PgOwnerLists(late, { few: 5, window: 4 }).candidates(1, { text: 'needle 3' }))).map(
    (c) => Number(c.hash.slice(0, 6)),
  );
  assert.deepEqual(
    broad,
    NEEDLES_NEWEST.filter((n) => String(n).startsWith('3')),
  );
  assert.equal(sent.filter((q) => q.includes('limit $')).length, 1);
  assert.ok(sent.filter((q) => q.includes('offset 0')).length > 1);
});

test('the index is asked while PostgreSQL expects to read up to four times `few` rows, then walked past that', async () => {
  const url = await walkable();
  const sent: string[] = [];
  const lists = new PgOwnerLists(postgresOf(url, sent, { max: 1 }), { few: 20, window: 4 });
  // `needle 1`: 36 expected, within four times 20, so the index is asked; it finds more than 20, so the walk follows.
  const filter = { text: 'needle 1' };
  const found = (await all(lists.candidates(1, filter))).filter((c) => matchesOwned(filter, c));
  assert.deepEqual(
    found.map((c) => Number(c.hash.slice(0, 6))),
    NEEDLES_NEWEST.filter((n) => String(n).startsWith('1')),
  );
  assert.equal(sent.filter((q) => q.includes('limit $')).length, 1);
  // `needle`: 133 expected, past four times 20: walked at once.
  sent.length = 0;
  assert.equal((await all(lists.candidates(1, { text: 'needle' }))).length, 133);
  assert.equal(sent.filter((q) => q.includes('limit $')).length, 0);
});

test('the search narrows: a word no paste holds gives no candidate to read', async () => {
  const db = await openDatabase(parseConfig({ DATABASE_URL: await createTestDatabase(), DATABASE_WAIT_SECONDS: '5' }));
  opened.push(db);
  await migrate(db.sql);
  const store = new PgPasteStore(db.sql);
  for (let i = 0; i < 20; i++)
    await store.create(() => record(`${String(i).padStart(6, '0')}Narr`, `note ${i}`, `body ${i}`), {
      add: async () => {},
      withdraw: async () => {},
    });
  const owners = new PgOwnerLists(db.sql);
  assert.equal((await all(owners.candidates(1, { text: 'NOTE 1' }))).length, 11);
  assert.deepEqual(await all(owners.candidates(1, { text: 'absent' })), []);
});

/** A search's bound whose time is what `left` says, and what the store said when it stopped. */
function boundOf(left: () => number): SearchBound & { said: [number, number][] } {
  const said: [number, number][] = [];
  return { left, stopped: (read, of) => void said.push([read, of]), said };
}

test('a search whose time is spent stops before its next query and says how many of the newest pastes it decided', async () => {
  const url = await walkable();
  const sent: string[] = [];
  const lists = new PgOwnerLists(postgresOf(url, sent), { few: 5, window: 4 });
  let time = 1_000;
  const bound = boundOf(() => time);
  const seen: number[] = [];
  for await (const batch of lists.candidates(1, { text: 'needle' }, undefined, bound)) {
    seen.push(...batch.map((c) => Number(c.hash.slice(0, 6))));
    // Spent after the first window, the newest 4 (400 to 397), which holds 399.
    time = 0;
  }
  assert.deepEqual(seen, [399]);
  assert.deepEqual(bound.said, [[4, 400]]);
  // Each query ran with what was left of the time as its statement_timeout.
  assert.ok(sent.filter((q) => q.includes("set_config('statement_timeout'")).length >= 3);
  // Spent before it began: nothing is read, and nothing was decided.
  const none = boundOf(() => 0);
  assert.deepEqual(await all(lists.candidates(1, { text: 'needle' }, undefined, none)), []);
  assert.deepEqual(none.said, [[0, 400]]);
  // A search found in the index stops between its batches too, after the last row it read.
  let narrowTime = 1_000;
  const narrow = boundOf(() => narrowTime);
  const got: number[] = [];
  for await (const batch of new PgOwnerLists(postgresOf(url), { few: 50, window: 2 }).candidates(
    1,
    { text: 'needle 39' },
    undefined,
    narrow,
  )) {
    got.push(...batch.map((c) => Number(c.hash.slice(0, 6))));
    narrowTime = 0;
  }
  // 399 and 396 first; 396 is the 5th newest paste.
  assert.deepEqual(got, [399, 396]);
  assert.deepEqual(narrow.said, [[5, 400]]);
  // Given all the time it needs, the search is whole and says nothing.
  const whole = boundOf(() => 60_000);
  assert.deepEqual(
    (await all(lists.candidates(1, { text: 'needle' }, undefined, whole))).map((c) => Number(c.hash.slice(0, 6))),
    NEEDLES_NEWEST,
  );
  assert.deepEqual(whole.said, []);
});

test("PostgreSQL ends a search's query when its time is up, even one that waits on a lock", async () => {
  const url = await walkable();
  const lists = new PgOwnerLists(postgresOf(url), { few: 5, window: 4 });
  const locker = postgresOf(url, undefined, { max: 1 });
  const watcher = postgresOf(url, undefined, { max: 1 });
  let release: () => void = () => {};
  const released = new Promise<void>((r) => {
    release = r;
  });
  let locked: () => void = () => {};
  const isLocked = new Promise<void>((r) => {
    locked = r;
  });
  const held = locker.begin(async (tx) => {
    await tx`lock table pastes in access exclusive mode`;
    locked();
    await released;
  });
  // The search starts once the lock is held, or its first query may run before it.
  await isLocked;
  const started = performance.now();
  // Time enough for the watcher below to see each query wait, on a loaded machine too.
  const bound = boundOf(() => 6_000 - (performance.now() - started));
  const search = all(lists.candidates(1, { text: 'needle' }, undefined, bound));
  /** Resolves when a query that starts with `start` waits on the lock. */
  const waiting = async (start: string): Promise<void> => {
    for (;;) {
      const [row] = await watcher`select count(*)::int as n from pg_stat_activity
        where wait_event_type = 'Lock' and query like ${`${start}%`}`;
      if ((row?.['n'] as number) > 0) return;
      assert.ok(performance.now() - started < 20_000, `${start} never waited`);
      await new Promise((r) => setImmediate(r));
    }
  };
  // The question to the index has half the time: its statement_timeout ends it, and the walk
  // has the rest, until its own first query is ended in turn. Then, to say how far it got, the
  // search counts the user's pastes, which waits on the lock too.
  try {
    await waiting('explain');
    await waiting('select created_at::text as at');
    await waiting('select count(*)::int as of');
    assert.ok(performance.now() - started >= 6_000);
  } finally {
    release();
    await held;
  }
  assert.deepEqual(await search, []);
  assert.deepEqual(bound.said, [[0, 400]]);
});

test("a user's many pastes are searched through the trigram index: the plan of the search's question uses it", async () => {
  const url = await createTestDatabase();
  const sql = postgresOf(url);
  await migrate(sql);
  // 5,000 pastes of user 1 and 5,000 of others, one in a hundred of user 1's saying zanzibar.
  await sql`insert into pastes (hash, owner_id, privacy, created_at, updated_at, language, title, highlight,
      burn_after_read, content_json)
    select lpad(i::text, 6, '0') || 'Plan', 1 + i % 2, 'public', '2024-01-01T00:00:00Z'::timestamptz + i * interval '1 second',
      now(), 'text', 'paste ' || i, true, false,
      to_json(case when i % 200 = 0 then 'to zanzibar and back ' || i else 'cache queue retry parser ' || i end)::text
    from generate_series(1, 10000) i`;
  // As autovacuum leaves it: the index's pending entries merged, the statistics taken.
  await sql`vacuum analyze pastes`;
  const asked: { query: string; parameters: unknown[] }[] = [];
  const watched = postgresOf(url, undefined, {
    debug: (_c: number, query: string, parameters: unknown[]) => void asked.push({ query, parameters }),
  });
  const found = await all(new PgOwnerLists(watched).candidates(1, { text: 'Zanzibar' }));
  assert.equal(found.length, 50);
  const question = asked.find((q) => q.query.includes('limit $'));
  assert.ok(question !== undefined, `the index was asked: ${JSON.stringify(asked.map((q) => q.query.slice(0, 60)))}`);
  const [plan] = await sql.unsafe(`explain (format json) ${question.query}`, question.parameters as never[]);
  const text = JSON.stringify(plan);
  assert.match(text, /"Index Name":"pastes_owner_words"/);
  assert.doesNotMatch(text, /Seq Scan/);
});

test('a word cut into many runs sends few conditions: each run once, and past MOST_TERMS only the longest', () => {
  // 200 × U+0130: 200 runs of `i` (any one character) for the index, one expression for the walk.
  assert.deepEqual(likeTerms('\u0130'.repeat(200)), ['%_%']);
  assert.equal(walkTerms('\u0130'.repeat(200)).length, 1);
  const words = Array.from({ length: 20 }, (_, i) => 'w'.repeat(1 + (i % 10)) + String(i)).join('"');
  const like = likeTerms(words);
  assert.equal(like.length, MOST_TERMS);
  // Runs of 2 to 12 characters: the eight longest, 6 to 9 and 16 to 19, in the words' order.
  assert.deepEqual(
    like,
    [6, 7, 8, 9, 16, 17, 18, 19].map((i) => `%${'w'.repeat(1 + (i % 10))}${i}%`),
  );
  assert.equal(walkTerms(words).length, MOST_TERMS);
});

test('the LIKE patterns: runs of plain ASCII, wildcards escaped, i and k any one character', () => {
  assert.deepEqual(likeTerms('Hello World'), ['%hello world%']);
  assert.deepEqual(likeTerms('100%_x'), ['%100\\%\\_x%']);
  assert.deepEqual(likeTerms('Kit'), ['%__t%']);
  assert.deepEqual(likeTerms('say "hi"\n\\now'), ['%say %', '%h_%', '%now%']);
  assert.deepEqual(likeTerms('caf\u00E9 bar'), ['%caf%', '% bar%']);
  assert.deepEqual(likeTerms('\u00E9\u00E9'), []);
});

test('characters without case stay in the patterns, as they are', () => {
  assert.deepEqual(likeTerms('\u65E5\u672C \u{1F600}!'), ['%\u65E5\u672C \u{1F600}!%']);
  assert.deepEqual(likeTerms('\u0141\u00F3d\u017A \u2026 \u00B2'), ['%d%', '% \u2026 \u00B2%']);
  assert.deepEqual(likeTerms('a\u0307b\uD800c'), ['%a%', '%b%', '%c%']);
});

test('the walk keeps cased letters outside ASCII: a run that holds one is a regular expression of brackets', () => {
  assert.deepEqual(walkTerms('Hello World'), [{ like: '%hello world%' }]);
  assert.deepEqual(walkTerms('\u0141\u00F3d\u017A 1.5'), [
    { regex: '[\u0142\u0141][\u00F3\u00D3][dD][\u017A\u0179]\\ 1\\.5' },
  ]);
  assert.deepEqual(walkTerms('Kit \u03C2\u2026'), [{ regex: '[kK\u212A][iI\u0130][tT]\\ [\u03C2\u03A3]\u2026' }]);
  assert.deepEqual(walkTerms('say "\u00E9"\n\u00DFx\u0307y'), [
    { like: '%say %' },
    { regex: '[\u00E9\u00C9]' },
    { regex: '[\u00DF\u1E9E][xX]\u0307[yY]' },
  ]);
  // U+0307 after `i`, or opening a run, may be half of U+0130's lowercase.
  assert.deepEqual(walkTerms('\u0130\u0130'), [{ regex: '(?:[iI]\u0307|\u0130)(?:[iI]\u0307|\u0130)' }]);
  assert.deepEqual(walkTerms('"\u0307\u0307'), [{ regex: '(?:\u0307|\u0130)\u0307' }]);
  // Without a letter, the column is read as it is.
  assert.deepEqual(walkTerms('\u65E5\u672C'), [{ exact: '%\u65E5\u672C%' }]);
  assert.deepEqual(walkTerms('100% "1_5"'), [{ exact: '%100\\% %' }, { exact: '%1\\_5%' }]);
});

test("no character above U+1FFFF lowercases to another, so the walk's table of cased letters stops there", () => {
  const found: number[] = [];
  for (let cp = 0x20000; cp <= 0x10ffff; cp++) {
    const ch = String.fromCodePoint(cp);
    if (ch.toLowerCase() !== ch) found.push(cp);
  }
  assert.deepEqual(found, []);
});

test("a character without case is no other character's lowercase, nor part of it, but for U+0307 of U+0130", () => {
  const found: string[] = [];
  for (let cp = 0; cp <= 0x10ffff; cp++) {
    if (cp >= 0xd800 && cp <= 0xdfff) continue;
    const ch = String.fromCodePoint(cp);
    const lower = ch.toLowerCase();
    if (lower === ch) continue;
    for (const c of lower)
      if (c !== ch && c.toLowerCase() === c && c.toUpperCase() === c)
        found.push(`${cp.toString(16)}:${(c.codePointAt(0) as number).toString(16)}`);
  }
  assert.deepEqual(found, ['130:307']);
});

test('only U+0130 and U+212A lowercase to ASCII from outside it, which likeTerms relies on', () => {
  const found: number[] = [];
  for (let cp = 0x80; cp <= 0x10ffff; cp++) {
    if (cp >= 0xd800 && cp <= 0xdfff) continue;
    if (/[\x00-\x7f]/.test(String.fromCodePoint(cp).toLowerCase())) found.push(cp);
  }
  assert.deepEqual(found, [0x130, 0x212a]);
});

test("each user's paste count in one read, and a page of the list without the rest", async () => {
  const db = await openDatabase(parseConfig({ DATABASE_URL: await createTestDatabase(), DATABASE_WAIT_SECONDS: '5' }));
  opened.push(db);
  await migrate(db.sql);
  const store = new PgPasteStore(db.sql);
  const owners = new PgOwnerLists(db.sql);
  for (let i = 0; i < 7; i++) {
    const at = T0 + i;
    await store.create(
      () =>
        record(`${String(i).padStart(6, '0')}Cout`, 't', 'x', {
          owner_id: i < 5 ? 1 : 2,
          created_at: at,
          updated_at: at,
        }),
      { add: async () => {}, withdraw: async () => {} },
    );
  }
  assert.deepEqual(
    [...(await owners.counts([1, 2, 3]))],
    [
      [1, 5],
      [2, 2],
      [3, 0],
    ],
  );
  const all = await owners.list(1);
  assert.deepEqual(await owners.slice(1, 1, 2), all.slice(1, 3));
  assert.deepEqual(await owners.slice(1, 4, 10), all.slice(4));
  assert.deepEqual(await owners.slice(1, 9, 10), []);
});

test("migration 6 indexes the owner's words, and without the right to make extensions it applies without them", async () => {
  const withIndex = await openDatabase(
    parseConfig({ DATABASE_URL: await createTestDatabase(), DATABASE_WAIT_SECONDS: '5' }),
  );
  opened.push(withIndex);
  await migrate(withIndex.sql);
  assert.equal((await withIndex.sql`select 1 from pg_indexes where indexname = 'pastes_owner_words'`).length, 1);

  // A role that may make tables in the schema but not extensions in the database.
  const c = await testCluster();
  const url = await createTestDatabase();
  const database = new URL(url).pathname.slice(1);
  const role = `plain_${process.pid}`;
  psql(c, `CREATE ROLE ${role} LOGIN`);
  psql(c, `GRANT CREATE ON SCHEMA public TO ${role}`, database);
  const db = await openDatabase(
    parseConfig({ DATABASE_URL: url.replace('postgres@', `${role}@`), DATABASE_WAIT_SECONDS: '5' }),
  );
  opened.push(db);
  await migrate(db.sql);
  assert.equal((await db.sql`select 1 from pg_indexes where indexname = 'pastes_owner_words'`).length, 0);
  const store = new PgPasteStore(db.sql);
  await store.create(() => record('000001Plan', 'Plain words', 'some text'), {
    add: async () => {},
    withdraw: async () => {},
  });
  const found = await all(new PgOwnerLists(db.sql).candidates(1, { text: 'WORDS' }));
  assert.deepEqual(
    found.map((r) => r.hash),
    ['000001Plan'],
  );
});

test('migration 15: a text over INDEXED_TEXT_BYTES stays out of the trigram index, and a narrow search still finds it', async () => {
  const migration = await readFile(
    new URL('../../src/pg/migrations/015-huge-pastes-unindexed.sql', import.meta.url),
    'utf8',
  );
  assert.equal(
    migration.split(String(INDEXED_TEXT_BYTES)).length - 1,
    1,
    'the migration and owner-lists.ts say one number',
  );
  const url = await createTestDatabase();
  const db = await openDatabase(parseConfig({ DATABASE_URL: url, DATABASE_WAIT_SECONDS: '5' }));
  opened.push(db);
  await migrate(db.sql);
  const [words] = await db.sql`select pg_get_indexdef('pastes_owner_words'::regclass) as def`;
  assert.match(
    String(words?.['def']),
    new RegExp(`WHERE \\(octet_length\\(content_json\\) <= ${INDEXED_TEXT_BYTES}\\)`),
  );
  const store = new PgPasteStore(db.sql);
  const none = { add: async () => {}, withdraw: async () => {} };
  const big = 'hay '.repeat(INDEXED_TEXT_BYTES / 4);
  await store.create(() => record('000001Huge', 'big one', `${big}needle at the end`), none);
  await store.create(() => record('000002Huge', 'big two', `${big}nothing`), none);
  await store.create(() => record('000003Smal', 'small', 'a needle'), none);
  await db.sql`analyze pastes`;
  const sent: string[] = [];
  const lists = new PgOwnerLists(postgresOf(url, sent, { max: 1 }), { few: 5, window: 4 });
  const found = await all(lists.candidates(1, { text: 'NEEDLE' }));
  assert.deepEqual(
    found.map((c) => c.hash),
    ['000003Smal', '000001Huge'],
  );
  // Found through the indexes (the large texts' by their size), not by a walk of every paste.
  assert.equal(sent.filter((q) => q.includes('limit $')).length, 1);
  assert.equal(sent.filter((q) => q.includes('offset 0')).length, 0);
});

test('a server whose database has no trigram index says so once at start, and its searches still find every match', async () => {
  const c = await testCluster();
  const url = await createTestDatabase();
  const database = new URL(url).pathname.slice(1);
  const role = `lesser_${process.pid}`;
  psql(c, `CREATE ROLE ${role} LOGIN`);
  psql(c, `GRANT CREATE ON SCHEMA public TO ${role}`, database);
  const s = await startServer({ env: { DATABASE_URL: url.replace('postgres@', `${role}@`), OPEN_REGISTRATION: '1' } });
  const warned = s.output().match(/My pastes search has no trigram index/g) ?? [];
  assert.equal(warned.length, 1, s.output());
  const [erin] = await registerAll(s, 'erin');
  await createViaForm(erin, { title: 'Plain words', content: 'some text' });
  assert.match((await erin.get('/my?q=WORDS')).text, /1 paste found/);
  // Where the index is, nothing is said.
  const fine = await startServer({ env: { DATABASE_URL: await createTestDatabase() } });
  assert.doesNotMatch(fine.output(), /trigram/);
});
