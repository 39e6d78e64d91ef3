import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { parseConfig } from '../../src/config.ts';
import { jsonLine } from '../../src/log/appender.ts';
import { type ApiLogEntry, MAX_CHARS } from '../../src/log/entry.ts';
import { BadCursorError, type LogPage, type LogQuery } from '../../src/log/reader.ts';
import { PgApiLog } from '../../src/pg/api-log.ts';
import { type Database, openDatabase } from '../../src/pg/connect.ts';
import { migrate } from '../../src/pg/migrate.ts';
import { createTestDatabase } from '../helpers/postgres.ts';
import { until } from '../helpers/until.ts';

const opened: Database[] = [];
after(() => Promise.all(opened.map((d) => d.close())));
async function freshDatabase(): Promise<Database> {
  const db = await openDatabase(parseConfig({ DATABASE_URL: await createTestDatabase(), DATABASE_WAIT_SECONDS: '5' }));
  opened.push(db);
  await migrate(db.sql);
  return db;
}

const DAY0 = Date.UTC(2024, 2, 10); // 2024-03-10T00:00Z
const STEP_MS = 30_000; // 2 880 lines a day, so 12 000 lines span five days
const TOTAL = 12_000;
const ENDPOINTS = ['/api/v1/paste', '/api/v1/paste/abc', '/api/v1/raw/abc'];
const STATUSES = [200, 201, 302, 400, 404, 429, 500, 204, 301, 401, 503];

/** Line i of the synthetic log (test/log/reader.test.ts's); `duration_ms` doubles as its id. */
function make(i: number): ApiLogEntry {
  const status = STATUSES[i % STATUSES.length] ?? 200;
  const e: ApiLogEntry = {
    time: new Date(DAY0 + i * STEP_MS).toISOString(),
    token_id: i % 7 === 0 ? null : `tok${i % 5}`,
    user_id: i % 7 === 0 ? null : i % 3,
    method: i % 2 === 0 ? 'GET' : 'POST',
    endpoint: ENDPOINTS[i % ENDPOINTS.length] ?? '/',
    status,
    ip: `10.0.${i % 256}.1`,
    duration_ms: i,
  };
  if (status >= 400) e.error = `failure ${i}`;
  return e;
}

const all = Array.from({ length: TOTAL }, (_, i) => make(i));
const newestFirst = [...all].reverse();
const ids = (es: ApiLogEntry[]): number[] => es.map((e) => e.duration_ms);
/** What the file log reads back for an entry: its line, parsed. */
const asFileReads = (e: ApiLogEntry): ApiLogEntry => JSON.parse(jsonLine(e)) as ApiLogEntry;

async function readAll(log: PgApiLog, query: LogQuery): Promise<{ entries: ApiLogEntry[]; pages: number }> {
  const entries: ApiLogEntry[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const page: LogPage = await log.read(cursor === null ? query : { ...query, cursor });
    pages += 1;
    if (page.next !== null) assert.equal(page.entries.length, query.limit ?? 50, 'only the last page is short');
    entries.push(...page.entries);
    cursor = page.next;
  } while (cursor !== null);
  return { entries, pages };
}

describe('PgApiLog reading', () => {
  let log: PgApiLog;
  before(async () => {
    const db = await freshDatabase();
    log = new PgApiLog(db.sql);
    for (const e of all) log.append(e);
    await log.close();
    assert.equal(log.written, TOTAL);
  });

  it('the first page is the newest 50 lines', async () => {
    const page = await log.read({});
    assert.deepEqual(page.entries, newestFirst.slice(0, 50));
    assert.notEqual(page.next, null);
  });

  it('paging through the whole log gives every line once, newest first, across days', async () => {
    const { entries, pages } = await readAll(log, { limit: 500 });
    assert.equal(pages, TOTAL / 500);
    assert.deepEqual(ids(entries), ids(newestFirst));
  });

  const filters: { name: string; query: LogQuery; keep: (e: ApiLogEntry) => boolean }[] = [
    { name: 'token_id', query: { token_id: 'tok3' }, keep: (e) => e.token_id === 'tok3' },
    { name: 'user_id', query: { user_id: 2 }, keep: (e) => e.user_id === 2 },
    { name: 'endpoint', query: { endpoint: '/api/v1/raw/abc' }, keep: (e) => e.endpoint === '/api/v1/raw/abc' },
    { name: 'statusClass 2', query: { statusClass: 2 }, keep: (e) => e.status >= 200 && e.status < 300 },
    { name: 'statusClass 3', query: { statusClass: 3 }, keep: (e) => e.status >= 300 && e.status < 400 },
    { name: 'statusClass 4', query: { statusClass: 4 }, keep: (e) => e.status >= 400 && e.status < 500 },
    { name: 'statusClass 5', query: { statusClass: 5 }, keep: (e) => e.status >= 500 },
    {
      name: 'from (inclusive) and to (exclusive)',
      query: { from: DAY0 + 5_000 * STEP_MS, to: DAY0 + 5_100 * STEP_MS },
      keep: (e) => e.duration_ms >= 5_000 && e.duration_ms < 5_100,
    },
    { name: 'from alone', query: { from: DAY0 + 11_990 * STEP_MS }, keep: (e) => e.duration_ms >= 11_990 },
    {
      name: 'a range holding more lines than were written after it (read down the ids)',
      query: { from: DAY0 + 100 * STEP_MS, to: DAY0 + 11_900 * STEP_MS },
      keep: (e) => e.duration_ms >= 100 && e.duration_ms < 11_900,
    },
    { name: 'to alone', query: { to: DAY0 + 10 * STEP_MS }, keep: (e) => e.duration_ms < 10 },
    { name: 'a NaN bound, which bounds nothing', query: { from: Number.NaN, to: Number.NaN }, keep: () => true },
    {
      name: 'token, user, endpoint and status together',
      query: { token_id: 'tok1', user_id: 0, endpoint: '/api/v1/paste', statusClass: 4 },
      keep: (e) =>
        e.token_id === 'tok1' && e.user_id === 0 && e.endpoint === '/api/v1/paste' && e.status >= 400 && e.status < 500,
    },
    { name: 'a filter nothing matches', query: { token_id: 'nobody' }, keep: () => false },
  ];

  for (const f of filters) {
    it(`filter by ${f.name} returns the newest matching lines first`, async () => {
      const expected = newestFirst.filter(f.keep);
      const page = await log.read({ ...f.query, limit: 500 });
      assert.deepEqual(page.entries, expected.slice(0, 500));
      assert.equal(page.next === null, expected.length <= 500);
    });
  }

  it('paging a filtered set with a cursor gives exactly the matching lines, no duplicates, no gaps', async () => {
    const query: LogQuery = { token_id: 'tok4', statusClass: 4, limit: 37 };
    const expected = newestFirst.filter((e) => e.token_id === 'tok4' && e.status >= 400 && e.status < 500);
    assert.ok(expected.length > 37 * 10);
    const { entries } = await readAll(log, query);
    assert.deepEqual(entries, expected);
  });

  it('paging an old time range (read by the time index and sorted) gives exactly its lines, newest first', async () => {
    const query: LogQuery = { from: DAY0 + 1_000 * STEP_MS, to: DAY0 + 2_000 * STEP_MS, statusClass: 4, limit: 37 };
    const expected = newestFirst.filter(
      (e) => e.duration_ms >= 1_000 && e.duration_ms < 2_000 && e.status >= 400 && e.status < 500,
    );
    assert.ok(expected.length > 37 * 3);
    const { entries } = await readAll(log, query);
    assert.deepEqual(entries, expected);
  });

  it('the page limit defaults to 50 and is clamped to 1..500', async () => {
    for (const [limit, size] of [
      [undefined, 50],
      [10_000, 500],
      [0, 1],
      [-5, 1],
      [2.9, 2],
      [Number.NaN, 50],
    ] as const) {
      const page = await log.read(limit === undefined ? {} : { limit });
      assert.equal(page.entries.length, size, `limit ${limit}`);
    }
  });

  it('a malformed cursor throws BadCursorError', async () => {
    const b64 = (s: string): string => Buffer.from(s).toString('base64url');
    const bad = [
      '',
      'not a cursor!',
      'x'.repeat(500),
      '0.1',
      '-1.0',
      '1',
      '1.5.2',
      '1.x',
      '1.1234567',
      '99999999999999999.0',
      b64('["api-2024-03-10.jsonl",0]'),
    ];
    for (const cursor of bad)
      await assert.rejects(log.read({ cursor }), BadCursorError, `cursor ${JSON.stringify(cursor)}`);
  });
});

describe('PgApiLog writing', () => {
  let db: Database;
  before(async () => {
    db = await freshDatabase();
  });
  beforeEach(async () => {
    await db.sql`delete from api_log_chunks`;
    await db.sql`delete from api_log_seen`;
  });

  it('lines read back exactly as the file log writes them, every field and cap included', async () => {
    const log = new PgApiLog(db.sql);
    const long: ApiLogEntry = {
      time: '2024-03-10T01:02:03.456Z',
      token_id: 't'.repeat(MAX_CHARS.token_id + 5),
      user_id: 7,
      method: 'M'.repeat(100),
      endpoint: `/p/${'é'.repeat(300)}`,
      status: 431,
      ip: '1'.repeat(99),
      duration_ms: 12.34,
      request_id: 'r'.repeat(99),
      error: `bad \u2028 line \u0001 ${'e'.repeat(400)}`,
      unlogged: 17,
    };
    const plain: ApiLogEntry = { ...make(3), time: '2024-03-10T01:02:04.000Z', endpoint: '/a\\u0000b "q"' };
    const nul: ApiLogEntry = { ...make(4), time: '2024-03-10T01:02:05.000Z', error: 'a\u0000b\\' };
    for (const e of [long, plain, nul]) log.append(e);
    await log.close();
    const { entries } = await log.read({});
    assert.deepEqual(entries, [{ ...asFileReads(nul), error: 'a\ufffdb\\' }, asFileReads(plain), asFileReads(long)]);
    assert.equal(entries[2]?.endpoint_length, long.endpoint.length);
    assert.deepEqual(Object.keys(entries[2] ?? {}), Object.keys(asFileReads(long)), 'fields in the file line order');
    assert.deepEqual([log.written, log.dropped, log.unwritten], [3, 0, 0]);
  });

  it('chunks go through the connection given for inserts; reads and retention through the pool', async () => {
    const elsewhere = await freshDatabase();
    const log = new PgApiLog(db.sql, { inserts: elsewhere.sql });
    log.append(make(1));
    log.append(make(2));
    await log.close();
    assert.equal(log.written, 2);
    assert.deepEqual((await log.read({})).entries, [], 'nothing was inserted through the pool');
    assert.deepEqual(ids((await new PgApiLog(elsewhere.sql).read({})).entries), [2, 1]);
    await db.sql`insert into api_log_chunks (first_time, last_time, line_count, lines)
      values ('2024-03-10T00:00:00Z', '2024-03-10T00:00:00Z', 1, ${JSON.stringify([make(0).time])})`;
    await log.prune(1, DAY0 + 5 * 86_400_000);
    assert.equal((await db.sql`select id from api_log_chunks`).length, 0, 'pruned through the pool');
    assert.equal((await elsewhere.sql`select id from api_log_chunks`).length, 1);
  });

  it('append only queues; lines are inserted by the timer, and those left at close', async () => {
    const log = new PgApiLog(db.sql, { flushIntervalMs: 20 });
    log.append(make(1));
    assert.equal(log.unwritten, 1);
    assert.deepEqual((await log.read({})).entries, [], 'not inserted yet');
    log.start();
    await until(async () => (await log.read({})).entries.length > 0, {
      timeoutMs: 2_000,
      what: 'the timer to insert within a few intervals',
      everyMs: 10,
    });
    for (let i = 2; i < 6; i++) log.append(make(i));
    await log.close();
    assert.deepEqual(ids((await log.read({})).entries), [5, 4, 3, 2, 1]);
    assert.deepEqual([log.written, log.unwritten], [5, 0]);
  });

  it('a time of another shape is stored as its instant; unparsable, as now', async () => {
    const now = Date.UTC(2025, 0, 2, 3, 4, 5, 6);
    const log = new PgApiLog(db.sql, { now: () => now });
    log.append({ ...make(1), time: '2024-03-10T01:02:03+01:00' });
    log.append({ ...make(2), time: 'yesterday' });
    await log.close();
    assert.deepEqual(
      (await log.read({})).entries.map((e) => e.time),
      ['2025-01-02T03:04:05.006Z', '2024-03-10T00:02:03.000Z'],
    );
  });

  it('lines appended between pages neither repeat nor shift the pages', async () => {
    const log = new PgApiLog(db.sql);
    for (let i = 0; i < 10; i++) log.append(make(i));
    await log.flush();
    const p1 = await log.read({ limit: 4 });
    assert.deepEqual(ids(p1.entries), [9, 8, 7, 6]);
    log.append(make(10));
    log.append(make(11));
    await log.flush();
    const p2 = await log.read({ limit: 4, cursor: p1.next ?? '' });
    assert.deepEqual(ids(p2.entries), [5, 4, 3, 2]);
    const p3 = await log.read({ limit: 4, cursor: p2.next ?? '' });
    assert.deepEqual(p3, { entries: [make(1), make(0)], next: null });
    assert.deepEqual(ids((await log.read({ limit: 4 })).entries), [11, 10, 9, 8]);
    const exact = await log.read({ limit: 12 });
    assert.deepEqual([exact.entries.length, exact.next], [12, null], 'a page ending on the oldest line has no cursor');
  });

  it('a failed insert keeps its lines, up to the bound, and inserts them in order once it can', async () => {
    const warnings: string[] = [];
    const log = new PgApiLog(db.sql, {
      maxBufferedLines: 5,
      warn: (m) => warnings.push(m),
      where: 'the test database',
    });
    log.append(make(0));
    log.append(make(1));
    await db.sql`alter table api_log_chunks rename to api_log_away`;
    try {
      await log.flush();
      assert.deepEqual([log.written, log.unwritten, log.dropped], [0, 2, 0]);
      for (let i = 2; i < 8; i++) log.append(make(i));
      await log.flush();
      assert.deepEqual([log.written, log.unwritten, log.dropped], [0, 5, 3], 'the oldest dropped past the bound');
    } finally {
      await db.sql`alter table api_log_away rename to api_log_chunks`;
    }
    assert.equal(warnings.length, 1);
    assert.match(warnings[0] ?? '', /^api log: cannot write to the test database \(.+\); keeping up to 5 lines/);
    await log.close();
    assert.deepEqual(ids((await log.read({})).entries), [7, 6, 5, 4, 3]);
    assert.deepEqual([log.written, log.unwritten, log.dropped], [5, 0, 3]);
    assert.deepEqual(warnings.slice(1), ['api log: writing again; 3 lines were dropped']);
  });

  it('a chunk the database refuses for what it holds is kept, warned of once, and inserted once it can', async () => {
    const warnings: string[] = [];
    const log = new PgApiLog(db.sql, { warn: (m) => warnings.push(m), where: 'the test database' });
    for (let i = 0; i < 3; i++) log.append(make(i));
    // A check on the chunk itself, not a missing table: the statement is refused as a whole.
    await db.sql`alter table api_log_chunks add constraint few_lines check (line_count < 3) not valid`;
    try {
      await log.flush();
      assert.deepEqual([log.written, log.unwritten, log.dropped], [0, 3, 0]);
      await log.flush();
      assert.deepEqual(
        (await db.sql`select chunk from api_log_seen`).length,
        0,
        'nothing of the refused chunk is left',
      );
    } finally {
      await db.sql`alter table api_log_chunks drop constraint few_lines`;
    }
    assert.equal(warnings.length, 1);
    assert.match(warnings[0] ?? '', /^api log: cannot write to the test database \(.*few_lines.*\); keeping up to/);
    await log.close();
    assert.deepEqual(ids((await log.read({})).entries), [2, 1, 0]);
    assert.deepEqual([log.written, log.unwritten, log.dropped], [3, 0, 0]);
  });

  it("a chunk's span is its lines' first and last instants, whatever their year", async () => {
    const log = new PgApiLog(db.sql);
    const times = ['1999-12-31T23:59:59.999Z', '1970-01-01T00:00:00.001Z', '2100-02-28T12:00:00.500Z'];
    for (const [i, time] of times.entries()) log.append({ ...make(i), time });
    await log.close();
    const [chunk] = await db.sql`
      select (extract(epoch from first_time) * 1000)::float8 as first, (extract(epoch from last_time) * 1000)::float8 as last,
        line_count from api_log_chunks`;
    assert.deepEqual(
      [chunk?.['first'], chunk?.['last'], chunk?.['line_count']],
      [Date.parse(times[1] ?? ''), Date.parse(times[2] ?? ''), 3],
    );
    const y1999 = await log.read({ from: Date.parse('1999-12-31T00:00:00Z'), to: Date.parse('2000-01-01T00:00:00Z') });
    assert.deepEqual(ids(y1999.entries), [0]);
  });

  it("two logs writing at once on one database each list their own chunks' values", async () => {
    const logs = [new PgApiLog(db.sql), new PgApiLog(db.sql)];
    for (let round = 0; round < 5; round++) {
      for (const [n, log] of logs.entries())
        for (let i = 0; i < 1_500; i++) log.append({ ...make(i), token_id: `log${n}`, user_id: n });
      await Promise.all(logs.map((log) => log.flush()));
    }
    const chunks = await db.sql`
      select c.id, c.lines, array_agg(s.kind::text || s.value order by s.kind, s.value) as seen
      from api_log_chunks c join api_log_seen s on s.chunk = c.id group by c.id`;
    assert.equal(chunks.length, 20, 'a chunk of 1000 lines and one of 500 for each flush of each log');
    for (const chunk of chunks) {
      const n = (chunk['lines'] as string).includes('"log0"') ? 0 : 1;
      assert.ok(!(chunk['lines'] as string).includes(`"log${1 - n}"`));
      assert.deepEqual(chunk['seen'], [
        'e/api/v1/paste',
        'e/api/v1/paste/abc',
        'e/api/v1/raw/abc',
        's2',
        's3',
        's4',
        's5',
        `tlog${n}`,
        `u${n}`,
      ]);
    }
  });

  it('any line the file log holds is held as written: a status no smallint holds, a U+0000', async () => {
    const warnings: string[] = [];
    const log = new PgApiLog(db.sql, { warn: (m) => warnings.push(m) });
    log.append(make(1));
    log.append({ ...make(2), status: 70_000 });
    log.append(make(3));
    await log.close();
    assert.deepEqual(
      (await log.read({})).entries.map((e) => [e.duration_ms, e.status]),
      [
        [3, make(3).status],
        [2, 70_000],
        [1, make(1).status],
      ],
    );
    assert.deepEqual([log.written, log.dropped, log.unwritten, warnings], [3, 0, 0, []]);
  });

  it('prune deletes the lines dated before today minus the retention, by UTC day', async () => {
    const log = new PgApiLog(db.sql);
    log.append(make(1)); // day 10, a chunk of its own
    await log.flush();
    for (const i of [0, 2879, 2880, 5760]) log.append(make(i)); // days 10, 10 (23:59:30), 11, 12: one chunk
    await log.close();
    await log.prune(1, DAY0 + 2 * 86_400_000 + 5_000); // 2024-03-12: keeps the 11th and later
    assert.deepEqual(ids((await log.read({})).entries), [5760, 2880]);
    assert.deepEqual(ids((await log.read({ token_id: make(1).token_id ?? '' })).entries), []);
    // The chunk wholly before the cut is gone with what it held; the one across it starts at the cut.
    const chunks = await db.sql`select id, line_count, (extract(epoch from first_time) * 1000)::float8 as first
      from api_log_chunks`;
    assert.deepEqual(
      chunks.map((c) => [c['line_count'], c['first']]),
      [[2, DAY0 + 2880 * STEP_MS]],
    );
    assert.deepEqual(
      (await db.sql`select distinct chunk from api_log_seen`).map((r) => r['chunk']),
      chunks.map((c) => c['id']),
    );
  });

  it('a cursor taken before retention cuts a chunk goes on where it stopped: the lines left keep their places', async () => {
    const log = new PgApiLog(db.sql);
    for (const i of [0, 1, 2, 2880, 2881, 2882, 2883]) log.append(make(i)); // days 10 and 11, one chunk
    await log.close();
    const p1 = await log.read({ limit: 2 });
    assert.deepEqual(ids(p1.entries), [2883, 2882]);
    await log.prune(1, DAY0 + 2 * 86_400_000 + 5_000); // keeps the 11th
    const p2 = await log.read({ limit: 2, cursor: p1.next ?? '' });
    assert.deepEqual(p2, { entries: [make(2881), make(2880)], next: null });
    assert.deepEqual(
      (await db.sql`select duration_ms from api_log order by id`).map((r) => r['duration_ms']),
      [2880, 2881, 2882, 2883],
      'the view shows the lines left',
    );
    const [chunk] = await db.sql`select line_count, (extract(epoch from first_time) * 1000)::float8 as first
      from api_log_chunks`;
    assert.deepEqual([chunk?.['line_count'], chunk?.['first']], [4, DAY0 + 2880 * STEP_MS]);
  });

  it('retention deletes a chunk none of whose lines is left, whatever span it was written with', async () => {
    const log = new PgApiLog(db.sql, { maxBufferedLines: 1, warn: () => undefined });
    await db.sql`alter table api_log_chunks rename to api_log_away`;
    try {
      log.append(make(5760)); // day 12, dropped past the bound below: its chunk still spans day 12
      await log.flush();
      log.append(make(0)); // day 10
    } finally {
      await db.sql`alter table api_log_away rename to api_log_chunks`;
    }
    await log.close();
    assert.deepEqual([log.written, log.dropped], [1, 1]);
    await log.prune(1, DAY0 + 2 * 86_400_000 + 5); // before the 11th goes
    assert.deepEqual((await log.read({})).entries, []);
    assert.equal((await db.sql`select id from api_log_chunks`).length, 0);
    assert.equal((await db.sql`select chunk from api_log_seen`).length, 0);
  });

  it('a token or endpoint holding U+0000 is written as U+FFFD, and its filter finds the line', async () => {
    const log = new PgApiLog(db.sql);
    log.append({ ...make(1), token_id: 'to\u0000k', endpoint: '/a\u0000b' });
    log.append(make(2));
    await log.close();
    assert.deepEqual([log.written, log.unwritten, log.dropped], [2, 0, 0]);
    assert.deepEqual(ids((await log.read({ endpoint: '/a\ufffdb' })).entries), [1]);
    assert.deepEqual(ids((await log.read({ token_id: 'to\ufffdk' })).entries), [1]);
  });

  it('each chunk is listed under every token, user, endpoint and status class its lines hold, as the lines hold them', async () => {
    const log = new PgApiLog(db.sql);
    const long = `/p/${'x'.repeat(MAX_CHARS.endpoint + 10)}`;
    for (let i = 0; i < 1_001; i++) log.append(i === 1_000 ? { ...make(i), endpoint: long } : make(i));
    await log.close();
    const seen = await db.sql`
      select c.line_count, s.kind, s.value from api_log_seen s join api_log_chunks c on c.id = s.chunk
      order by c.id, s.kind, s.value`;
    const of = (n: number): string[] =>
      seen.filter((r) => r['line_count'] === n).map((r) => `${r['kind']}${r['value']}`);
    const first = all.slice(0, 1_000);
    const expected = new Set<string>();
    for (const e of first) {
      if (e.token_id !== null) expected.add(`t${e.token_id}`);
      if (e.user_id !== null) expected.add(`u${e.user_id}`);
      expected.add(`e${e.endpoint}`);
      expected.add(`s${Math.floor(e.status / 100)}`);
    }
    assert.deepEqual(of(1_000).sort(), [...expected].sort());
    // The second chunk holds one line, whose endpoint the line holds cut, and a filter compares that.
    assert.ok(of(1).includes(`e${long.slice(0, MAX_CHARS.endpoint)}…`));
    const cut = (await log.read({ limit: 1 })).entries[0]?.endpoint ?? '';
    assert.deepEqual(ids((await log.read({ endpoint: cut })).entries), [1_000]);
  });
});
