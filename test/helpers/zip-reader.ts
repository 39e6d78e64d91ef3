import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { crc32 } from 'node:zlib';
import { tool } from './tools.ts';

/** One entry of a zip as its central directory names it, with its bytes read from its local header. */
export interface ReadEntry {
  name: string;
  crc: number;
  flags: number;
  bytes: Buffer;
}

/**
 * A small zip reader for tests: the end record, the central directory, each entry's local
 * header and stored bytes; asserts the structure holds and each CRC-32 matches its bytes.
 */
export function readZip(zip: Buffer): ReadEntry[] {
  const end = zip.length - 22;
  assert.equal(zip.readUInt32LE(end), 0x06054b50, 'an end of central directory record, without a comment');
  const count = zip.readUInt16LE(end + 10);
  const dirSize = zip.readUInt32LE(end + 12);
  let at = zip.readUInt32LE(end + 16);
  assert.equal(at + dirSize, end, 'the central directory ends where the end record starts');
  const out: ReadEntry[] = [];
  for (let i = 0; i < count; i++) {
    assert.equal(zip.readUInt32LE(at), 0x02014b50);
    const flags = zip.readUInt16LE(at + 8);
    assert.equal(zip.readUInt16LE(at + 10), 0, 'stored');
    const crc = zip.readUInt32LE(at + 16);
    const size = zip.readUInt32LE(at + 20);
    const nameLen = zip.readUInt16LE(at + 28);
    const extra = zip.readUInt16LE(at + 30) + zip.readUInt16LE(at + 32);
    const local = zip.readUInt32LE(at + 42);
    const name = zip.subarray(at + 46, at + 46 + nameLen).toString('utf8');
    assert.equal(zip.readUInt32LE(local), 0x04034b50);
    const localName = zip.readUInt16LE(local + 26);
    const start = local + 30 + localName + zip.readUInt16LE(local + 28);
    const bytes = zip.subarray(start, start + size);
    assert.equal(crc32(bytes), crc, `the CRC-32 of ${name}`);
    out.push({ name, crc, flags, bytes });
    at += 46 + nameLen + extra;
  }
  return out;
}

/** Runs `unzip -t` on the archive (Debian's unzip); answers its output, failing on a bad archive. */
export async function unzipTest(zip: Buffer): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'zip-test-'));
  try {
    const path = join(dir, 'a.zip');
    await writeFile(path, zip);
    const { stdout } = await promisify(execFile)(tool('unzip'), ['-t', path]);
    return stdout;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
