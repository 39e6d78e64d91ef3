import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { appendFile, mkdir, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readLog } from '../../src/log/reader.ts';
import type { LogQuery, ReadLogOptions } from '../../src/log/reader.ts';
import type { ApiLogEntry } from '../../src/log/entry.ts';
import type { ApiLog } from '../../src/backend.ts';
import { DAY0, make as makeEntry, readAll } from '../contract/api-log.ts';

const STEP_MS = 2000; // 43 200 lines a day, so 100 000 lines span three days
const TOTAL = 100_000;
const ROTATE_AT = 20_000; // day one is split into api-2024-03-10.jsonl and .1.jsonl
/** Line i of the synthetic log (test/contract/api-log.ts's, closer together); `duration_ms` doubles as its id. */
const make = (i: number): ApiLogEntry => makeEntry(i, STEP_MS);

const all = Array.from({ length: TOTAL }, (_, i) => make(i));
const newestFirst = [...all].reverse();
const ids = (es: ApiLogEntry[]): number[] => es.map((e) => e.duration_ms);

/** The reader of `dir`'s files, with `opts` (to count bytes read or read in small chunks). */
const reader = (dir: string, opts: ReadLogOptions = {}): Pick<ApiLog, 'read'> => ({
  read: (query) => readLog(dir, query, opts),
});

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
    const { entries, pages } = await readAll(reader(big, { onRead: (n) => void (bytes += n) }), { limit: 500 });
    assert.equal(pages, TOTAL / 500);
    assert.deepEqual(ids(entries), ids(newestFirst));
    // Each page rereads at most one chunk it had already seen, so the total stays near the size.
    assert.ok(bytes < totalBytes * 2, `read ${bytes} of ${totalBytes}`);
  });

  it('paging with chunks smaller than a line still splits lines correctly', async () => {
    // The newest 400 lines: the end of a file, behind a half-written line.
    const query: LogQuery = { from: DAY0 + 99_600 * STEP_MS, limit: 33 };
    const { entries } = await readAll(reader(big, { chunkBytes: 97 }), query);
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

  describe('a live log', () => {
    let dir = '';
    const lineOf = (i: number): string => `${JSON.stringify(make(i))}\n`;
    const range = (from: number, to: number): number[] => Array.from({ length: to - from }, (_, k) => to - 1 - k);

    // Lines 0 to 9, then 10 and 11 appended and a new day begun, as a live log grows (the
    // pages read across such growth: test/contract/api-log.ts).
    before(async () => {
      dir = join(root, 'live');
      await mkdir(dir);
      const file = join(dir, 'api-2024-03-10.jsonl');
      await writeFile(file, range(0, 10).reverse().map(lineOf).join(''));
      await appendFile(file, lineOf(10) + lineOf(11));
      await writeFile(join(dir, 'api-2024-03-11.jsonl'), lineOf(50_000));
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
