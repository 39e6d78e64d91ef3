import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { LineBuffer } from '../../src/log/line-buffer.ts';

/** Every line held, decoded. */
const linesOf = (b: LineBuffer): string[] =>
  Array.from({ length: b.length }, (_, i) => b.bytes(i, i + 1).toString('utf8'));

describe('LineBuffer', () => {
  it('keeps lines as UTF-8 bytes, each with its own size', () => {
    const b = new LineBuffer();
    for (const line of ['a\n', 'é✓\n', '😀 four bytes\n', '']) b.push(line);
    assert.equal(b.length, 4);
    assert.deepEqual(linesOf(b), ['a\n', 'é✓\n', '😀 four bytes\n', '']);
    assert.deepEqual(
      [0, 1, 2, 3].map((i) => b.size(i)),
      [2, 6, 16, 0],
    );
    assert.equal(b.byteLength, 24);
    assert.equal(b.bytes(1, 3).toString('utf8'), 'é✓\n😀 four bytes\n');
  });

  it('drops the oldest lines', () => {
    const b = new LineBuffer();
    for (let i = 0; i < 5; i++) b.push(`line ${i}\n`);
    b.drop(2);
    assert.deepEqual(linesOf(b), ['line 2\n', 'line 3\n', 'line 4\n']);
    assert.equal(b.byteLength, 21);
    b.drop(10);
    assert.equal(b.length, 0);
    assert.equal(b.byteLength, 0);
  });

  it('grows past its first storage and keeps every line intact', () => {
    const b = new LineBuffer();
    const expected: string[] = [];
    // 2,000 lines of 100-odd bytes: past both the first 64 KB and the first 256 line slots.
    for (let i = 0; i < 2000; i++) {
      const line = `${i} ${'x✓'.repeat(i % 50)}\n`;
      b.push(line);
      expected.push(line);
    }
    assert.deepEqual(linesOf(b), expected);
    assert.equal(b.byteLength, Buffer.byteLength(expected.join('')));
  });

  it('gives the space of dropped lines back as it grows', () => {
    const b = new LineBuffer();
    const line = `${'y'.repeat(9_999)}\n`;
    // 200 MB pushed, never more than ten lines held: storage must not grow with the total.
    for (let i = 0; i < 20_000; i++) {
      b.push(line);
      if (b.length > 10) b.drop(1);
    }
    assert.equal(b.length, 10);
    assert.ok(b.bytes(0, 10).buffer.byteLength < 1024 * 1024, 'storage bounded by what is held');
    assert.deepEqual(linesOf(b), Array(10).fill(line));
  });

  it('appends a copy of the lines another buffer holds', () => {
    const a = new LineBuffer();
    const b = new LineBuffer();
    for (const l of ['1\n', '2\n', '3\n']) a.push(l);
    for (const l of ['4\n', 'ü\n']) b.push(l);
    a.drop(1);
    a.pushAll(b);
    assert.deepEqual(linesOf(a), ['2\n', '3\n', '4\n', 'ü\n']);
    b.drop(2);
    assert.deepEqual(linesOf(a), ['2\n', '3\n', '4\n', 'ü\n'], 'a copy, not shared');
  });

  it('cleared, forgets its lines and takes new ones in the storage it had', () => {
    const b = new LineBuffer();
    for (let i = 0; i < 2000; i++) b.push(`${i} ${'x'.repeat(100)}\n`);
    const storage = b.bytes(0, 1).buffer;
    assert.equal(b.clear(), true);
    assert.equal(b.length, 0);
    assert.equal(b.byteLength, 0);
    b.push('new\n');
    assert.deepEqual(linesOf(b), ['new\n']);
    assert.equal(b.bytes(0, 1).buffer, storage, 'the same storage, not a new allocation');
  });

  it('cleared after a burst, lets storage of more than 8 MiB go', () => {
    const b = new LineBuffer();
    const line = `${'z'.repeat(99_999)}\n`;
    for (let i = 0; i < 90; i++) b.push(line);
    const storage = b.bytes(0, 1).buffer;
    assert.equal(b.clear(), false);
    b.push('small\n');
    assert.deepEqual(linesOf(b), ['small\n']);
    assert.notEqual(b.bytes(0, 1).buffer, storage);
    assert.ok(b.bytes(0, 1).buffer.byteLength < 1024 * 1024);
  });

  it('appends a copy of its own lines once', () => {
    const a = new LineBuffer();
    for (const l of ['x\n', 'y\n']) a.push(l);
    a.pushAll(a);
    assert.deepEqual(linesOf(a), ['x\n', 'y\n', 'x\n', 'y\n']);
  });
});
