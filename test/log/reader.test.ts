import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { appendFile, mkdir, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BadCursorError, readLog } from '../../src/log/reader.ts';
import type { LogQuery, ReadLogOptions } from '../../src/log/reader.ts';
import type { ApiLogEntry } from '../../src/log/entry.ts';

const DAY0 = Date.UTC(2024, 2, 10); // 2024-03-10T00:00Z
const STEP_MS = 2000; // 43 200 lines a day, so 100 000 lines span three days
const TOTAL = 100_000;
const ROTATE_AT = 20_000; // day one is split into api-2024-03-10.jsonl and .1.jsonl
const ENDPOINTS = ['/api/v1/paste', '/api/v1/paste/abc', '/api/v1/raw/abc'];
const STATUSES = [200, 201, 302, 400, 404, 429, 500, 204, 301, 401, 503];

/** Line i of the synthetic log; `duration_ms` doubles as its id. */
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

/** Reads every page of `query`, checking each page's size, and counts bytes read. */
async function readAll(
  dir: string,
  query: LogQuery,
  opts: ReadLogOptions = {},
): Promise<{ entries: ApiLogEntry[]; pages: number }> {
  const entries: ApiLogEntry[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const page: { entries: ApiLogEntry[]; next: string | null } = await readLog(
      dir,
      cursor === null ? query : { ...query, cursor },
      opts,
    );
    pages += 1;
    if (page.next !== null) assert.equal(page.entries.length, query.limit ?? 50, 'only the last page is short');
    entries.push(...page.entries);
    cursor = page.next;
  } while (cursor !== null);
  return { entries, pages };
}

describe('readLog', () => {
  let root = '';
  let big = '';
  let totalBytes = 0;
  const dayBytes = new Map<string, number>();

  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'reader-'));
    big = join(root, 'big');
    await mkdir(big);
    const files = new Map<string, string[]>();
    for (const [i, e] of all.entries()) {
      const day = e.time.slice(0, 10);
      const name = i >= ROTATE_AT && day === '2024-03-10' ? `api-${day}.1.jsonl` : `api-${day}.jsonl`;
      const lines = files.get(name) ?? [];
      lines.push(JSON.stringify(e));
      // Junk the reader must skip: a torn line, a blank line, a non-entry.
      if (i === 500) lines.push('{"time":"2024-03-10T00:16', '', '[1,2,3]', '{"time":5}');
      files.set(name, lines);
    }
    for (const [name, lines] of files) {
      // The newest file ends in a half-written line, as during a live append.
      const tail = name === 'api-2024-03-12.jsonl' ? '{"time":"2024-03-12T' : '';
      const text = `${lines.join('\n')}\n${tail}`;
      await writeFile(join(big, name), text);
      const bytes = Buffer.byteLength(text);
      totalBytes += bytes;
      dayBytes.set(name.slice(4, 14), (dayBytes.get(name.slice(4, 14)) ?? 0) + bytes);
    }
    await writeFile(join(big, 'README.txt'), 'not a log');
    assert.equal(files.size, 4);
  });
  after(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('the first page is the newest 50 lines, read from the end of one file only', async () => {
    let bytes = 0;
    let reads = 0;
    const page = await readLog(big, {}, { onRead: (n) => ((bytes += n), (reads += 1)) });
    assert.deepEqual(page.entries, newestFirst.slice(0, 50));
    assert.notEqual(page.next, null);
    assert.equal(reads, 1);
    assert.ok(bytes <= 64 * 1024, `read ${bytes} bytes`);
    assert.ok(bytes * 100 < totalBytes, `read ${bytes} of ${totalBytes} bytes`);
  });

  it('paging through the whole log gives every line once, newest first, across days and rotations', async () => {
    let bytes = 0;
    const { entries, pages } = await readAll(big, { limit: 500 }, { onRead: (n) => void (bytes += n) });
    assert.equal(pages, TOTAL / 500);
    assert.deepEqual(ids(entries), ids(newestFirst));
    // Each page rereads at most one chunk it had already seen, so the total stays near the size.
    assert.ok(bytes < totalBytes * 2, `read ${bytes} of ${totalBytes}`);
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
      query: { from: DAY0 + 50_000 * STEP_MS, to: DAY0 + 50_100 * STEP_MS },
      keep: (e) => e.duration_ms >= 50_000 && e.duration_ms < 50_100,
    },
    { name: 'from alone', query: { from: DAY0 + 99_990 * STEP_MS }, keep: (e) => e.duration_ms >= 99_990 },
    { name: 'to alone', query: { to: DAY0 + 10 * STEP_MS }, keep: (e) => e.duration_ms < 10 },
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
      const page = await readLog(big, { ...f.query, limit: 500 });
      assert.deepEqual(page.entries, expected.slice(0, 500));
      assert.equal(page.next === null, expected.length <= 500);
    });
  }

  it('paging a filtered set with a cursor gives exactly the matching lines, no duplicates, no gaps', async () => {
    const query: LogQuery = { token_id: 'tok4', statusClass: 4, limit: 137 };
    const expected = newestFirst.filter((e) => e.token_id === 'tok4' && e.status >= 400 && e.status < 500);
    assert.ok(expected.length > 137 * 10);
    const { entries } = await readAll(big, query);
    assert.deepEqual(entries, expected);
  });

  it('paging with chunks smaller than a line still splits lines correctly', async () => {
    // The newest 400 lines: the end of a file, behind a half-written line.
    const query: LogQuery = { from: DAY0 + 99_600 * STEP_MS, limit: 33 };
    const { entries } = await readAll(big, query, { chunkBytes: 97 });
    assert.deepEqual(ids(entries), ids(newestFirst.slice(0, 400)));
  });

  it('files whose date is outside from/to are never read', async () => {
    let bytes = 0;
    const page = await readLog(
      big,
      { token_id: 'nobody', from: DAY0, to: DAY0 + 86_400_000 },
      { onRead: (n) => void (bytes += n) },
    );
    assert.deepEqual(page, { entries: [], next: null });
    assert.equal(bytes, dayBytes.get('2024-03-10'));
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
      const page = await readLog(big, limit === undefined ? {} : { limit });
      assert.equal(page.entries.length, size, `limit ${limit}`);
    }
  });

  it('a malformed cursor throws BadCursorError', async () => {
    const b64 = (s: string): string => Buffer.from(s).toString('base64url');
    const bad = [
      '',
      'not a cursor!',
      'x'.repeat(500),
      b64('not json'),
      b64('{"f":"api-2024-03-10.jsonl","o":0}'),
      b64('[1,2]'),
      b64('["api-2024-03-10.jsonl"]'),
      b64('["../../etc/passwd",0]'),
      b64('["api-2024-03-10.jsonl",-1]'),
      b64('["api-2024-03-10.jsonl",1.5]'),
      b64('["api-2024-03-10.jsonl","12"]'),
    ];
    for (const cursor of bad) {
      await assert.rejects(readLog(big, { cursor }), BadCursorError, `cursor ${JSON.stringify(cursor)}`);
    }
    const err = new BadCursorError();
    assert.equal(err.name, 'BadCursorError');
    assert.ok(err instanceof Error);
  });

  describe('a live log', () => {
    let dir = '';
    const lineOf = (i: number): string => `${JSON.stringify(make(i))}\n`;
    const range = (from: number, to: number): number[] => Array.from({ length: to - from }, (_, k) => to - 1 - k);

    before(async () => {
      dir = join(root, 'live');
      await mkdir(dir);
    });

    it('lines appended between pages neither repeat nor shift the pages', async () => {
      const file = join(dir, 'api-2024-03-10.jsonl');
      await writeFile(file, range(0, 10).reverse().map(lineOf).join(''));
      const p1 = await readLog(dir, { limit: 4 });
      assert.deepEqual(ids(p1.entries), [9, 8, 7, 6]);

      await appendFile(file, lineOf(10) + lineOf(11));
      await writeFile(join(dir, 'api-2024-03-11.jsonl'), lineOf(50_000)); // a new day starts
      const p2 = await readLog(dir, { limit: 4, cursor: p1.next ?? '' });
      assert.deepEqual(ids(p2.entries), [5, 4, 3, 2]);
      const p3 = await readLog(dir, { limit: 4, cursor: p2.next ?? '' });
      assert.deepEqual(p3, { entries: [make(1), make(0)], next: null });

      const fresh = await readLog(dir, { limit: 4 });
      assert.deepEqual(ids(fresh.entries), [50_000, 11, 10, 9]);
    });

    it('a page that ends on the oldest line has no next cursor', async () => {
      const page = await readLog(dir, { limit: 13 });
      assert.equal(page.entries.length, 13);
      assert.equal(page.next, null);
    });

    it('a page that ends on the first line of a newer file continues into the older one', async () => {
      const p1 = await readLog(dir, { limit: 1 });
      assert.deepEqual(ids(p1.entries), [50_000]);
      assert.notEqual(p1.next, null);
      const p2 = await readLog(dir, { limit: 1, cursor: p1.next ?? '' });
      assert.deepEqual(ids(p2.entries), [11]);
    });

    it('a cursor into a file deleted since continues with the older files', async () => {
      const p1 = await readLog(dir, { limit: 1 });
      await rm(join(dir, 'api-2024-03-11.jsonl'));
      const p2 = await readLog(dir, { limit: 3, cursor: p1.next ?? '' });
      assert.deepEqual(ids(p2.entries), [11, 10, 9]);
    });

    it('a cursor past the end of a file that shrank reads the file from its end', async () => {
      const file = join(dir, 'api-2024-03-10.jsonl');
      const cursor = Buffer.from(JSON.stringify(['api-2024-03-10.jsonl', (await stat(file)).size + 1000])).toString(
        'base64url',
      );
      const page = await readLog(dir, { limit: 2, cursor });
      assert.deepEqual(ids(page.entries), [11, 10]);
    });

    it('a file of only a half-written line and a missing folder read as empty', async () => {
      const empty = join(root, 'half');
      await mkdir(empty);
      await writeFile(join(empty, 'api-2024-03-10.jsonl'), '{"time":"2024');
      await writeFile(join(empty, 'api-2024-03-09.jsonl'), '');
      assert.deepEqual(await readLog(empty, {}), { entries: [], next: null });
      assert.deepEqual(await readLog(join(root, 'absent'), {}), { entries: [], next: null });
    });
  });
});
