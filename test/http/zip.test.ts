import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { test } from 'node:test';
import { crc32 } from 'node:zlib';
import { type ZipEntry, zipLength, zipStream } from '../../src/http/zip.ts';
import { readZip, unzipTest } from '../helpers/zip-reader.ts';
import { skipWithout } from '../helpers/tools.ts';

const entry = (name: string, bytes: Buffer, chunks = 1): ZipEntry => ({
  name,
  size: bytes.length,
  open: () => {
    const step = Math.ceil(bytes.length / chunks) || 1;
    const parts: Buffer[] = [];
    for (let i = 0; i < bytes.length; i += step) parts.push(bytes.subarray(i, i + step));
    return Readable.from(parts);
  },
});

const FILES: [string, Buffer][] = [
  ['paste.txt', Buffer.from('hello\nworld\n')],
  ['Ünïcødé 名前 ‮gnp.exe', Buffer.from([0, 1, 2, 255, 254])],
  ['empty', Buffer.alloc(0)],
  ['big.log', Buffer.from(`${'x'.repeat(200_000)}end`)],
];

const make = async (): Promise<Buffer> => {
  const entries = FILES.map(([n, b]) => entry(n, b, 7));
  const zip = await buffer(zipStream(entries, new Date(Date.UTC(2026, 11, 6, 17, 30, 10))));
  assert.equal(zip.length, zipLength(entries), 'the length announced before the first byte');
  return zip;
};

test('a zip written as a stream: names as given (UTF-8 flag), bytes and CRC-32 of each entry', async () => {
  const got = readZip(await make());
  assert.deepEqual(
    got.map((e) => e.name),
    FILES.map(([n]) => n),
  );
  for (const [i, e] of got.entries()) {
    const want = (FILES[i] as [string, Buffer])[1];
    assert.ok(e.bytes.equals(want), e.name);
    assert.equal(e.crc, crc32(want));
    assert.equal(e.flags & 0x0800, 0x0800, 'names are UTF-8');
  }
});

test('unzip -t finds every entry of the archive sound', async (t) => {
  if (skipWithout(t, 'unzip')) return;
  const out = await unzipTest(await make());
  assert.match(out, /No errors detected/);
  assert.match(out, /testing: big\.log\s+OK/);
});

test('an entry whose bytes are not its announced size fails the stream, never a quietly wrong archive', async () => {
  const liar: ZipEntry = { name: 'x', size: 10, open: () => Readable.from([Buffer.from('short')]) };
  await assert.rejects(buffer(zipStream([liar], new Date())), /changed size/);
});
