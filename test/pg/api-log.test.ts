import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { parseConfig } from '../../src/config.ts';
import { type ApiLogEntry, MAX_CHARS } from '../../src/log/entry.ts';
import { BadCursorError } from '../../src/log/reader.ts';
import { PgApiLog } from '../../src/pg/api-log.ts';
import { type Database, openDatabase } from '../../src/pg/connect.ts';
import { migrate } from '../../src/pg/migrate.ts';
import { asFileReads, DAY0, ids, make, STEP_MS } from '../contract/api-log.ts';
import { createTestDatabase } from '../helpers/postgres.ts';

const opened: Database[] = [];
after(() => Promise.all(opened.map((d) => d.close())));
async function freshDatabase(): Promise<Database> {
  const db = await openDatabase(parseConfig({ DATABASE_URL: await createTestDatabase(), DATABASE_WAIT_SECONDS: '5' }));
  opened.push(db);
  await migrate(db.sql);
  return db;
}

const all = Array.from({ length: 1_001 }, (_, i) => make(i));

// What the two backends share (reading, paging, filters, buffering, write failures) is the
// contract suite's (test/contract/api-log.ts); here is what only PostgreSQL's chunks have.
describe('PgApiLog writing', () => {
  let db: Database;
  before(async () => {
    db = await freshDatabase();
  });
  beforeEach(async () => {
    await db.sql`delete from api_log_chunks`;
    await db.sql`delete from api_log_seen`;
  });

  it('an error holding U+0000 reads back with U+FFFD in its place, the rest as the file log writes it', async () => {
    const log = new PgApiLog(db.sql);
    const nul: ApiLogEntry = { ...make(4), time: '2024-03-10T01:02:05.000Z', error: 'a\u0000b\\' };
    log.append(nul);
    await log.close();
    const { entries } = await log.read({});
    assert.deepEqual(entries, [{ ...asFileReads(nul), error: 'a\ufffdb\\' }]);
    assert.deepEqual([log.written, log.dropped, log.unwritten], [1, 0, 0]);
  });

  it("a cursor of the data folder's form throws BadCursorError", async () => {
    const log = new PgApiLog(db.sql);
    for (let i = 0; i < 3; i++) log.append(make(i));
    await log.close();
    const cursor = Buffer.from('["api-2024-03-10.jsonl",0]').toString('base64url');
    await assert.rejects(log.read({ cursor }), BadCursorError);
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
