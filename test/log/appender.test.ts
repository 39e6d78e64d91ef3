import { after, before, describe, it, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { jsonLine, LogAppender } from '../../src/log/appender.ts';
import type { LogAppenderOptions } from '../../src/log/appender.ts';
import { bounded, MAX_CHARS, MAX_LINE_BYTES, type ApiLogEntry } from '../../src/log/entry.ts';

const T0 = Date.UTC(2024, 2, 10, 12, 0, 0); // 2024-03-10T12:00Z

function entry(time: number, n = 0, extra: Partial<ApiLogEntry> = {}): ApiLogEntry {
  return {
    time: new Date(time).toISOString(),
    // Same length for every two-digit n, so the size tests can count lines per file.
    token_id: `tok${n % 10}`,
    user_id: n % 10,
    method: 'GET',
    endpoint: '/api/v1/paste/x',
    status: 200,
    ip: '127.0.0.1',
    duration_ms: n,
    ...extra,
  };
}

async function lines(file: string): Promise<ApiLogEntry[]> {
  const text = await readFile(file, 'utf8');
  assert.ok(text.endsWith('\n'));
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as ApiLogEntry);
}

// What the data folder shares with PostgreSQL (reading back, counts, flushes, write failures
// and the bound) is the contract suite's (test/contract/api-log.ts); here, the files themselves.
describe('LogAppender', () => {
  let root = '';
  let seq = 0;
  const freshDir = (): string => join(root, `logs-${seq++}`);
  const quiet: Pick<LogAppenderOptions, 'warn'> = { warn: () => undefined };

  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'appender-'));
  });
  after(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('append buffers in memory and flush writes parseable lines in order', async () => {
    const dir = freshDir();
    const log = new LogAppender({ dir, now: () => T0, ...quiet });
    const written = [
      entry(T0, 1, { token_id: null, user_id: null }),
      entry(T0 + 1, 2, { status: 500, error: 'boom\n"quoted"\u2028' }),
    ];
    for (const e of written) log.append(e);
    assert.equal(log.buffered, 2);
    assert.deepEqual(await readdir(dir).catch(() => []), []);

    await log.flush();
    assert.equal(log.buffered, 0);
    assert.deepEqual(await readdir(dir), ['api-2024-03-10.jsonl']);
    assert.deepEqual(await lines(join(dir, 'api-2024-03-10.jsonl')), written);

    log.append(entry(T0 + 2, 3));
    await log.flush();
    assert.equal((await lines(join(dir, 'api-2024-03-10.jsonl'))).length, 3);
  });

  it('a buffer reused after a flush holds only the lines appended since, whatever their day', async () => {
    const dir = freshDir();
    const log = new LogAppender({ dir, now: () => T0, ...quiet });
    const first = Array.from({ length: 50 }, (_, i) => entry(T0 + i, i));
    for (const e of first) log.append(e);
    await log.flush();
    const nextDay = entry(T0 + 86_400_000, 7);
    log.append(nextDay);
    await log.flush();
    assert.deepEqual(await lines(join(dir, 'api-2024-03-10.jsonl')), first);
    assert.deepEqual(await lines(join(dir, 'api-2024-03-11.jsonl')), [nextDay]);
  });

  it('lines of a day reaching a megabyte are written without waiting for the timer', async () => {
    const dir = freshDir();
    // Never started: no timer, so only the size can set off this write.
    const log = new LogAppender({ dir, now: () => T0, ...quiet });
    const written: ApiLogEntry[] = [];
    // Until a write takes the lines (or far past a megabyte, which would be the failure).
    const endpoint = `/api/v1/${'x'.repeat(190)}`;
    const MiB = 1024 * 1024;
    let bytes = 0;
    while (log.buffered === written.length && bytes < 2 * MiB) {
      const e = entry(T0, written.length, { endpoint });
      log.append(e);
      written.push(e);
      bytes += Buffer.byteLength(`${jsonLine(e)}\n`);
      await new Promise((resolve) => setImmediate(resolve));
    }
    assert.equal(log.buffered, 0);
    // The line that took the day's lines to a megabyte set the write off.
    const last = Buffer.byteLength(`${jsonLine(written.at(-1) as ApiLogEntry)}\n`);
    assert.ok(bytes >= MiB && bytes - last < MiB, `${written.length} lines, ${bytes} bytes`);
    await log.close();
    assert.deepEqual(await lines(join(dir, 'api-2024-03-10.jsonl')), written);
  });

  it('flush with nothing buffered creates nothing', async () => {
    const dir = freshDir();
    await new LogAppender({ dir, ...quiet }).flush();
    assert.deepEqual(await readdir(dir).catch(() => []), []);
  });

  it('a buffer straddling UTC midnight splits across the two days files', async () => {
    const dir = freshDir();
    const midnight = Date.UTC(2024, 2, 11);
    const log = new LogAppender({ dir, now: () => midnight, ...quiet });
    log.append(entry(midnight - 1, 1));
    log.append(entry(midnight, 2));
    log.append(entry(midnight - 2, 3)); // a late finisher from the day before
    await log.flush();
    assert.deepEqual((await readdir(dir)).sort(), ['api-2024-03-10.jsonl', 'api-2024-03-11.jsonl']);
    assert.deepEqual(
      (await lines(join(dir, 'api-2024-03-10.jsonl'))).map((e) => e.duration_ms),
      [1, 3],
    );
    assert.deepEqual(
      (await lines(join(dir, 'api-2024-03-11.jsonl'))).map((e) => e.duration_ms),
      [2],
    );
  });

  it('an entry time with an offset is filed by its UTC date; an unparsable one by the clock', async () => {
    const dir = freshDir();
    const log = new LogAppender({ dir, now: () => T0, ...quiet });
    log.append({ ...entry(T0), time: '2024-03-01T22:00:00-05:00' });
    log.append({ ...entry(T0), time: 'not a time' });
    await log.flush();
    assert.deepEqual((await readdir(dir)).sort(), ['api-2024-03-02.jsonl', 'api-2024-03-10.jsonl']);
  });

  it('a file that would pass maxFileBytes rotates to .1, .2, and a restart continues there', async () => {
    const dir = freshDir();
    const size = Buffer.byteLength(`${JSON.stringify(entry(T0, 10))}\n`);
    const opts = { dir, now: () => T0, maxFileBytes: size * 3, ...quiet };
    const log = new LogAppender(opts);
    for (let n = 10; n < 15; n++) log.append(entry(T0, n));
    await log.flush();
    assert.deepEqual((await readdir(dir)).sort(), ['api-2024-03-10.1.jsonl', 'api-2024-03-10.jsonl']);
    assert.equal((await lines(join(dir, 'api-2024-03-10.jsonl'))).length, 3);
    assert.equal((await lines(join(dir, 'api-2024-03-10.1.jsonl'))).length, 2);

    log.append(entry(T0, 15));
    log.append(entry(T0, 16));
    await log.flush();
    assert.equal((await lines(join(dir, 'api-2024-03-10.1.jsonl'))).length, 3);
    assert.equal((await lines(join(dir, 'api-2024-03-10.2.jsonl'))).length, 1);

    const restarted = new LogAppender(opts);
    restarted.append(entry(T0, 17));
    restarted.append(entry(T0, 18));
    await restarted.close();
    assert.deepEqual(
      (await lines(join(dir, 'api-2024-03-10.2.jsonl'))).map((e) => e.duration_ms),
      [16, 17, 18],
    );
    assert.equal((await readdir(dir)).length, 3);
  });

  it('after a crash that cut the last line, a restart writes its lines on lines of their own', async () => {
    const dir = freshDir();
    await mkdir(dir, { recursive: true });
    const file = join(dir, 'api-2024-03-10.jsonl');
    await writeFile(file, `${JSON.stringify(entry(T0, 10))}\n{"time":"2024-03-10T12:0`);
    const log = new LogAppender({ dir, now: () => T0, ...quiet });
    log.append(entry(T0, 11));
    log.append(entry(T0, 12));
    await log.close();
    const text = (await readFile(file, 'utf8')).split('\n');
    assert.deepEqual(text, [
      JSON.stringify(entry(T0, 10)),
      '{"time":"2024-03-10T12:0',
      JSON.stringify(entry(T0, 11)),
      JSON.stringify(entry(T0, 12)),
      '',
    ]);
  });

  it('a line longer than maxFileBytes gets a file of its own', async () => {
    const dir = freshDir();
    const log = new LogAppender({ dir, now: () => T0, maxFileBytes: 10, ...quiet });
    log.append(entry(T0, 1));
    log.append(entry(T0, 2));
    await log.flush();
    assert.deepEqual((await readdir(dir)).sort(), ['api-2024-03-10.1.jsonl', 'api-2024-03-10.jsonl']);
  });

  it('lines appended while a write fails follow the unwritten ones of their day', async () => {
    const dir = freshDir();
    await writeFile(dir, 'blocker');
    const log = new LogAppender({ dir, now: () => T0, ...quiet });
    log.append(entry(T0, 1));
    log.append(entry(T0, 2));
    const failing = log.flush();
    // The write has taken lines 1 and 2; these wait behind it.
    log.append(entry(T0, 3));
    log.append(entry(T0 + 86_400_000, 9));
    log.append(entry(T0, 4));
    await failing;
    assert.equal(log.buffered, 5);

    await rm(dir);
    await log.flush();
    assert.deepEqual(
      (await lines(join(dir, 'api-2024-03-10.jsonl'))).map((e) => e.duration_ms),
      [1, 2, 3, 4],
    );
    assert.deepEqual(
      (await lines(join(dir, 'api-2024-03-11.jsonl'))).map((e) => e.duration_ms),
      [9],
    );
  });

  it('while writes fail, the earliest day loses its lines first', async () => {
    const dir = freshDir();
    await writeFile(dir, 'blocker');
    const log = new LogAppender({ dir, now: () => T0, maxBufferedLines: 3, ...quiet });
    const nextDay = T0 + 86_400_000;
    for (const [time, n] of [
      [nextDay, 7],
      [T0, 1],
      [T0, 2],
      [nextDay, 8],
    ] as const)
      log.append(entry(time, n));
    assert.equal(log.dropped, 1);

    await rm(dir);
    await log.flush();
    assert.deepEqual(
      (await lines(join(dir, 'api-2024-03-10.jsonl'))).map((e) => e.duration_ms),
      [2],
    );
    assert.deepEqual(
      (await lines(join(dir, 'api-2024-03-11.jsonl'))).map((e) => e.duration_ms),
      [7, 8],
    );
  });

  it('a failure after a rotation keeps only the unwritten lines, and the retry starts on a fresh line', async () => {
    const dir = freshDir();
    const size = Buffer.byteLength(`${JSON.stringify(entry(T0, 10))}\n`);
    const log = new LogAppender({ dir, now: () => T0, maxFileBytes: size * 2, ...quiet });
    log.append(entry(T0, 10));
    await log.flush();
    // Block the next rotation target: appending to a folder fails (EISDIR).
    await mkdir(join(dir, 'api-2024-03-10.1.jsonl'));
    for (let n = 11; n < 14; n++) log.append(entry(T0, n));
    log.append(entry(T0 + 86_400_000, 99)); // a later day waits behind the failure
    await log.flush();
    assert.equal(log.buffered, 3);
    assert.equal((await lines(join(dir, 'api-2024-03-10.jsonl'))).length, 2);

    await rm(join(dir, 'api-2024-03-10.1.jsonl'), { recursive: true });
    await log.flush();
    assert.equal(log.buffered, 0);
    assert.deepEqual(
      (await lines(join(dir, 'api-2024-03-10.1.jsonl'))).map((e) => e.duration_ms),
      [12, 13],
    );
    assert.deepEqual(
      (await lines(join(dir, 'api-2024-03-11.jsonl'))).map((e) => e.duration_ms),
      [99],
    );
  });

  it('after a failed write the next write to that file begins with a newline', async () => {
    const dir = freshDir();
    await mkdir(dir);
    const file = join(dir, 'api-2024-03-10.jsonl');
    const log = new LogAppender({ dir, now: () => T0, ...quiet });
    log.append(entry(T0, 1));
    await log.flush();
    // Simulate a torn write left by the failure, then a failure, then recovery.
    await writeFile(file, `${await readFile(file, 'utf8')}{"torn`);
    await rm(dir, { recursive: true });
    await writeFile(dir, 'blocker');
    log.append(entry(T0, 2));
    await log.flush();
    await rm(dir);
    await mkdir(dir);
    await writeFile(file, `{"torn`);
    await log.flush();
    assert.equal(await readFile(file, 'utf8'), `{"torn\n${JSON.stringify(entry(T0, 2))}\n`);
  });

  it('prune deletes only log files dated before the retention window', async () => {
    const dir = freshDir();
    await mkdir(dir);
    const names = [
      'api-2024-01-31.jsonl',
      'api-2024-02-08.jsonl',
      'api-2024-02-08.1.jsonl',
      'api-2024-02-09.jsonl',
      'api-2024-03-10.jsonl',
      'notes.txt',
      'api-2024-01-01.jsonl.bak',
    ];
    for (const name of names) await writeFile(join(dir, name), '');
    const log = new LogAppender({ dir, now: () => T0, retentionDays: 30, ...quiet });
    await log.prune();
    assert.deepEqual((await readdir(dir)).sort(), [
      'api-2024-01-01.jsonl.bak',
      'api-2024-02-09.jsonl',
      'api-2024-03-10.jsonl',
      'notes.txt',
    ]);
  });

  it('prune of a missing folder does nothing', async () => {
    await new LogAppender({ dir: freshDir(), ...quiet }).prune();
  });

  it('prune failing on a delete rejects, and start reports it instead', async () => {
    const dir = freshDir();
    await mkdir(join(dir, 'api-2000-01-01.jsonl'), { recursive: true });
    await writeFile(join(dir, 'api-2000-01-01.jsonl', 'x'), '');
    const warnings: string[] = [];
    const log = new LogAppender({ dir, now: () => T0, warn: (m) => warnings.push(m) });
    await assert.rejects(log.prune());
    log.start();
    log.start(); // idempotent
    await log.close();
    assert.equal(warnings.length, 1);
    assert.match(warnings[0] ?? '', /prune failed/);
  });

  it('the flush timer writes without an explicit flush', async (t) => {
    t.mock.timers.enable({ apis: ['setInterval'] });
    const dir = freshDir();
    const log = new LogAppender({ dir, now: () => T0, flushIntervalMs: 1000, ...quiet });
    const flush = t.mock.method(log, 'flush');
    log.start();
    log.append(entry(T0, 1));
    t.mock.timers.tick(999);
    assert.equal(flush.mock.callCount(), 0);
    t.mock.timers.tick(1);
    assert.equal(flush.mock.callCount(), 1);
    await flush.mock.calls[0]?.result;
    assert.equal(log.buffered, 0);
    await log.close();
    assert.equal((await lines(join(dir, 'api-2024-03-10.jsonl'))).length, 1);
  });
});

test('a line escapes U+2028 and U+2029, so every reader sees one line per entry', () => {
  const line = jsonLine({
    time: '2026-01-01T00:00:00.000Z',
    token_id: null,
    user_id: null,
    method: 'GET',
    endpoint: '/api/v1/x\u2028y\u2029z',
    status: 404,
    ip: '::1',
    duration_ms: 1,
    error: 'a\u2028b',
  });
  assert.doesNotMatch(line, /[\u2028\u2029\n\r]/);
  assert.equal((JSON.parse(line) as { endpoint: string }).endpoint, '/api/v1/x\u2028y\u2029z');
  assert.equal(line.split(/\r\n|[\n\r\u2028\u2029]/).length, 1);
});

test('a line holds exactly the entry, fields in the README order, as JSON.stringify would write it', () => {
  const text = fc.string({ unit: 'binary', maxLength: 40 });
  const entries = fc.record(
    {
      time: fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
      token_id: fc.option(text),
      user_id: fc.option(fc.integer()),
      // Within every field's MAX_CHARS, so nothing is cut (that is the next test's).
      method: fc.string({ unit: 'binary', maxLength: MAX_CHARS.method }),
      endpoint: text,
      status: fc.integer({ min: 100, max: 599 }),
      ip: text,
      // Durations are rounded to hundredths of a ms: those above all, and any other number.
      duration_ms: fc.oneof(
        fc.integer({ min: 0, max: 3_000_000_000 }).map((h) => h / 100),
        fc.double({ noNaN: true, noDefaultInfinity: true }),
      ),
      request_id: text,
      error: text,
    },
    { requiredKeys: ['time', 'token_id', 'user_id', 'method', 'endpoint', 'status', 'ip', 'duration_ms'] },
  );
  fc.assert(
    fc.property(entries, (e) => {
      const line = jsonLine(e);
      assert.doesNotMatch(line, /[\u2028\u2029\n\r]/);
      assert.deepEqual(JSON.parse(line), JSON.parse(JSON.stringify(e)));
      // The same text as stringifying the entry with its keys in order, but for the two escapes.
      const ordered = [
        'time',
        'token_id',
        'user_id',
        'method',
        'endpoint',
        'status',
        'ip',
        'duration_ms',
        'request_id',
        'error',
      ].filter((k) => k in e);
      assert.equal(
        line,
        JSON.stringify(e, ordered)
          .replace(/\u2028/g, '\\u2028')
          .replace(/\u2029/g, '\\u2029'),
      );
    }),
    { numRuns: 5_000 },
  );
  // Numbers JSON cannot hold are written as null, as JSON.stringify does.
  assert.equal(
    (JSON.parse(jsonLine({ ...entry(T0), duration_ms: Number.NaN })) as { duration_ms: unknown }).duration_ms,
    null,
  );
});

test('a line cuts an endpoint past 200 characters, with its full length, and bounds every other string', () => {
  const path = `/api/v1/${'A'.repeat(15 * 1024)}`;
  const line = jsonLine({
    ...entry(T0),
    endpoint: path,
    method: 'M'.repeat(1000),
    ip: 'I'.repeat(1000),
    error: 'E'.repeat(10_000),
    request_id: 'R'.repeat(1000),
    token_id: 'T'.repeat(1000),
  });
  const e = JSON.parse(line) as Record<string, unknown>;
  assert.equal(e['endpoint'], `${path.slice(0, 200)}…`);
  assert.equal(e['endpoint_length'], path.length);
  assert.equal(e['method'], `${'M'.repeat(MAX_CHARS.method)}…`);
  assert.equal(e['ip'], `${'I'.repeat(MAX_CHARS.ip)}…`);
  assert.equal(e['error'], `${'E'.repeat(MAX_CHARS.error)}…`);
  assert.equal(e['request_id'], `${'R'.repeat(MAX_CHARS.request_id)}…`);
  assert.equal(e['token_id'], `${'T'.repeat(MAX_CHARS.token_id)}…`);
  assert.ok(line.length < 1024, `${line.length} characters`);
  // An endpoint of exactly the limit is kept whole, without a length.
  const whole = JSON.parse(jsonLine({ ...entry(T0), endpoint: 'x'.repeat(200) })) as Record<string, unknown>;
  assert.equal(whole['endpoint'], 'x'.repeat(200));
  assert.equal('endpoint_length' in whole, false);
});

test('no line, whatever its strings hold, is longer than MAX_LINE_BYTES', () => {
  // A control character is the longest a character can be written: \u0000, six bytes.
  const worst = (n: number): string => '\u0001'.repeat(n + 1);
  const line = jsonLine({
    time: new Date(T0).toISOString(),
    token_id: worst(MAX_CHARS.token_id),
    user_id: Number.MAX_SAFE_INTEGER,
    method: worst(MAX_CHARS.method),
    endpoint: worst(100_000),
    status: 599,
    ip: worst(MAX_CHARS.ip),
    duration_ms: 1e300,
    request_id: worst(MAX_CHARS.request_id),
    error: worst(MAX_CHARS.error),
    unlogged: Number.MAX_SAFE_INTEGER,
  });
  assert.ok(Buffer.byteLength(`${line}\n`) <= MAX_LINE_BYTES, `${Buffer.byteLength(line)} bytes`);
});

test('bounded never leaves half of a surrogate pair', () => {
  const s = `${'a'.repeat(199)}😀tail`;
  assert.equal(bounded(s, 200), `${'a'.repeat(199)}…`);
  assert.equal(bounded(s, 201), `${'a'.repeat(199)}😀…`);
  assert.equal(bounded('short', 200), 'short');
});
