import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import type { ApiLog } from '../../src/backend.ts';
import { jsonLine } from '../../src/log/appender.ts';
import { type ApiLogEntry, MAX_CHARS } from '../../src/log/entry.ts';
import { BadCursorError, type LogPage, type LogQuery } from '../../src/log/reader.ts';
import { until } from '../helpers/until.ts';

/** What a backend's log is opened with; the rest is its own default. */
export interface ApiLogOptions {
  now?: () => number;
  flushIntervalMs?: number;
  maxBufferedLines?: number;
  warn?: (message: string) => void;
}

/** The API log as a server holds it (src/backend.ts, ApiLog), with what the server drives besides. */
export interface OpenApiLog extends ApiLog {
  start(): void;
  flush(): Promise<void>;
  close(): Promise<void>;
}

/** A backend's API log as the contract suite drives it, on a fresh, empty state. */
export interface ApiLogBackend {
  /** A log on this state; each call is another server, or a restart, on the same state. */
  open(opts?: ApiLogOptions): OpenApiLog;
  /** Where the log says it cannot write, in its warning. */
  readonly where: string;
  /** Makes every write of a log on this state fail until the function it answers is called. */
  breakWrites(): Promise<() => Promise<void>>;
}

export const DAY0 = Date.UTC(2024, 2, 10); // 2024-03-10T00:00Z
export const STEP_MS = 30_000; // 2 880 lines a day, so 12 000 lines span five days
const TOTAL = 12_000;
const ENDPOINTS = ['/api/v1/paste', '/api/v1/paste/abc', '/api/v1/raw/abc'];
const STATUSES = [200, 201, 302, 400, 404, 429, 500, 204, 301, 401, 503];

/** Line i of the synthetic log, `stepMs` after line i - 1; `duration_ms` doubles as its id. */
export function make(i: number, stepMs = STEP_MS): ApiLogEntry {
  const status = STATUSES[i % STATUSES.length] ?? 200;
  const e: ApiLogEntry = {
    time: new Date(DAY0 + i * stepMs).toISOString(),
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

export const ids = (es: ApiLogEntry[]): number[] => es.map((e) => e.duration_ms);
/** What the file log reads back for an entry: its line, parsed. */
export const asFileReads = (e: ApiLogEntry): ApiLogEntry => JSON.parse(jsonLine(e)) as ApiLogEntry;

/** Reads every page of `query` from `log` (a backend's, or one of its readers), checking that only the last is short. */
export async function readAll(
  log: Pick<ApiLog, 'read'>,
  query: LogQuery,
): Promise<{ entries: ApiLogEntry[]; pages: number }> {
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

/**
 * The API log's contract (README, API request log; src/backend.ts, ApiLog), declared for the
 * backend `fresh` opens: a new, empty state for each call. What only one backend has (file
 * rotation and torn lines, PostgreSQL's chunks) is tested in its own files.
 */
export function apiLogContract(fresh: () => Promise<ApiLogBackend>): void {
  describe('ApiLog reading', () => {
    const all = Array.from({ length: TOTAL }, (_, i) => make(i));
    const newestFirst = [...all].reverse();
    let log: OpenApiLog;
    before(async () => {
      log = (await fresh()).open();
      for (const e of all) log.append(e);
      await log.close();
      assert.equal(log.written, TOTAL);
    });

    test('the first page is the newest 50 lines', async () => {
      const page = await log.read({});
      assert.deepEqual(page.entries, newestFirst.slice(0, 50));
      assert.notEqual(page.next, null);
    });

    test('paging through the whole log gives every line once, newest first, across days', async () => {
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
          e.token_id === 'tok1' &&
          e.user_id === 0 &&
          e.endpoint === '/api/v1/paste' &&
          e.status >= 400 &&
          e.status < 500,
      },
      { name: 'a filter nothing matches', query: { token_id: 'nobody' }, keep: () => false },
    ];

    for (const f of filters) {
      test(`filter by ${f.name} returns the newest matching lines first`, async () => {
        const expected = newestFirst.filter(f.keep);
        const page = await log.read({ ...f.query, limit: 500 });
        assert.deepEqual(page.entries, expected.slice(0, 500));
        assert.equal(page.next === null, expected.length <= 500);
      });
    }

    test('paging a filtered set with a cursor gives exactly the matching lines, no duplicates, no gaps', async () => {
      const query: LogQuery = { token_id: 'tok4', statusClass: 4, limit: 37 };
      const expected = newestFirst.filter((e) => e.token_id === 'tok4' && e.status >= 400 && e.status < 500);
      assert.ok(expected.length > 37 * 10);
      const { entries } = await readAll(log, query);
      assert.deepEqual(entries, expected);
    });

    test('paging an old time range gives exactly its lines, newest first', async () => {
      const query: LogQuery = { from: DAY0 + 1_000 * STEP_MS, to: DAY0 + 2_000 * STEP_MS, statusClass: 4, limit: 37 };
      const expected = newestFirst.filter(
        (e) => e.duration_ms >= 1_000 && e.duration_ms < 2_000 && e.status >= 400 && e.status < 500,
      );
      assert.ok(expected.length > 37 * 3);
      const { entries } = await readAll(log, query);
      assert.deepEqual(entries, expected);
    });

    test('the page limit defaults to 50 and is clamped to 1..500', async () => {
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

    test('a malformed cursor throws BadCursorError', async () => {
      const b64 = (s: string): string => Buffer.from(s).toString('base64url');
      const bad = [
        '',
        'not a cursor!',
        'x'.repeat(500),
        // The data folder's cursors are base64url JSON [file, offset]; these are no cursor of either.
        b64('not json'),
        b64('{"f":"api-2024-03-10.jsonl","o":0}'),
        b64('[1,2]'),
        b64('["api-2024-03-10.jsonl"]'),
        b64('["../../etc/passwd",0]'),
        b64('["api-2024-03-10.jsonl",-1]'),
        b64('["api-2024-03-10.jsonl",1.5]'),
        b64('["api-2024-03-10.jsonl","12"]'),
        // PostgreSQL's are chunk.line; these are no cursor of either.
        '0.1',
        '-1.0',
        '1',
        '1.5.2',
        '1.x',
        '1.1234567',
        '99999999999999999.0',
      ];
      for (const cursor of bad)
        await assert.rejects(log.read({ cursor }), BadCursorError, `cursor ${JSON.stringify(cursor)}`);
      const err = new BadCursorError();
      assert.equal(err.name, 'BadCursorError');
      assert.ok(err instanceof Error);
    });
  });

  describe('ApiLog writing', () => {
    test('append only queues; lines are written by the timer, and those left at close', async () => {
      const log = (await fresh()).open({ flushIntervalMs: 20 });
      log.append(make(1));
      assert.equal(log.unwritten, 1);
      assert.deepEqual((await log.read({})).entries, [], 'not written yet');
      log.start();
      await until(async () => (await log.read({})).entries.length > 0, {
        timeoutMs: 2_000,
        what: 'the timer to write within a few intervals',
        everyMs: 10,
      });
      for (let i = 2; i < 6; i++) log.append(make(i));
      await log.close();
      assert.deepEqual(ids((await log.read({})).entries), [5, 4, 3, 2, 1]);
      assert.deepEqual([log.written, log.unwritten], [5, 0]);
    });

    test('close stops the timer and writes what is buffered', async () => {
      const log = (await fresh()).open({ flushIntervalMs: 60_000 });
      log.start();
      log.append(make(1));
      await log.close();
      assert.deepEqual(ids((await log.read({})).entries), [1]);
    });

    test('concurrent flushes keep lines whole and in append order', async () => {
      const log = (await fresh()).open();
      const flushes: Promise<void>[] = [];
      for (let n = 0; n < 200; n++) {
        log.append(make(n));
        if (n % 7 === 0) flushes.push(log.flush());
      }
      flushes.push(log.flush());
      await Promise.all(flushes);
      assert.deepEqual(
        ids((await log.read({ limit: 500 })).entries),
        Array.from({ length: 200 }, (_, n) => 199 - n),
      );
      assert.deepEqual([log.written, log.unwritten, log.dropped], [200, 0, 0]);
    });

    test('lines read back exactly as the file log writes them, every field and cap included', async () => {
      const log = (await fresh()).open();
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
      for (const e of [long, plain]) log.append(e);
      await log.close();
      const { entries } = await log.read({});
      assert.deepEqual(entries, [asFileReads(plain), asFileReads(long)]);
      assert.equal(entries[1]?.endpoint_length, long.endpoint.length);
      assert.deepEqual(Object.keys(entries[1] ?? {}), Object.keys(asFileReads(long)), 'fields in the file line order');
      assert.deepEqual([log.written, log.dropped, log.unwritten], [2, 0, 0]);
    });

    test('any line is held as written: a status no smallint holds', async () => {
      const warnings: string[] = [];
      const log = (await fresh()).open({ warn: (m) => warnings.push(m) });
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

    test('lines appended between pages neither repeat nor shift the pages', async () => {
      const log = (await fresh()).open();
      for (let i = 0; i < 10; i++) log.append(make(i));
      await log.flush();
      const p1 = await log.read({ limit: 4 });
      assert.deepEqual(ids(p1.entries), [9, 8, 7, 6]);
      log.append(make(10));
      log.append(make(11));
      log.append(make(50_000)); // a new day starts
      await log.flush();
      const p2 = await log.read({ limit: 4, cursor: p1.next ?? '' });
      assert.deepEqual(ids(p2.entries), [5, 4, 3, 2]);
      const p3 = await log.read({ limit: 4, cursor: p2.next ?? '' });
      assert.deepEqual(p3, { entries: [make(1), make(0)], next: null });
      assert.deepEqual(ids((await log.read({ limit: 4 })).entries), [50_000, 11, 10, 9]);
      const exact = await log.read({ limit: 13 });
      assert.deepEqual(
        [exact.entries.length, exact.next],
        [13, null],
        'a page ending on the oldest line has no cursor',
      );
    });

    test('a write error is reported once, keeps the lines, and they are written once writing works', async () => {
      const backend = await fresh();
      const warnings: string[] = [];
      const log = backend.open({ warn: (m) => warnings.push(m) });
      const repair = await backend.breakWrites();
      log.append(make(1));
      await log.flush();
      log.append(make(2));
      await log.flush();
      assert.deepEqual([log.written, log.unwritten, log.dropped], [0, 2, 0]);
      assert.equal(warnings.length, 1);
      assert.match(warnings[0] ?? '', /cannot write/);

      await repair();
      log.append(make(3));
      await log.flush();
      assert.equal(log.unwritten, 0);
      assert.deepEqual(ids((await log.read({})).entries), [3, 2, 1]);
      assert.equal(warnings.length, 2);
      assert.match(warnings[1] ?? '', /writing again$/);
    });

    test('lines beyond maxBufferedLines are dropped oldest first and counted while writes fail', async () => {
      const backend = await fresh();
      const warnings: string[] = [];
      const log = backend.open({ maxBufferedLines: 3, warn: (m) => warnings.push(m) });
      const repair = await backend.breakWrites();
      for (let n = 0; n < 5; n++) log.append(make(n));
      assert.equal(log.dropped, 2);
      await log.flush();
      log.append(make(5));
      assert.equal(log.dropped, 3);

      await repair();
      await log.flush();
      assert.deepEqual(ids((await log.read({})).entries), [5, 4, 3]);
      assert.match(warnings.at(-1) ?? '', /3 lines were dropped/);
    });

    test('a failed write keeps its lines, up to the bound, and writes them in order once it can', async () => {
      const backend = await fresh();
      const warnings: string[] = [];
      const log = backend.open({ maxBufferedLines: 5, warn: (m) => warnings.push(m) });
      log.append(make(0));
      log.append(make(1));
      const repair = await backend.breakWrites();
      try {
        await log.flush();
        assert.deepEqual([log.written, log.unwritten, log.dropped], [0, 2, 0]);
        for (let i = 2; i < 8; i++) log.append(make(i));
        await log.flush();
        assert.deepEqual([log.written, log.unwritten, log.dropped], [0, 5, 3], 'the oldest dropped past the bound');
      } finally {
        await repair();
      }
      assert.equal(warnings.length, 1);
      assert.ok(
        warnings[0]?.startsWith(`api log: cannot write to ${backend.where} (`),
        `names where it cannot write: ${warnings[0]}`,
      );
      assert.match(warnings[0] ?? '', /\(.+\); keeping up to 5 lines/);
      await log.close();
      assert.deepEqual(ids((await log.read({})).entries), [7, 6, 5, 4, 3]);
      assert.deepEqual([log.written, log.unwritten, log.dropped], [5, 0, 3]);
      assert.deepEqual(warnings.slice(1), ['api log: writing again; 3 lines were dropped']);
    });
  });
}
