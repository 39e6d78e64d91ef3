import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { access, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { buffer } from 'node:stream/consumers';
import { describe, test } from 'node:test';
import { type FileBlobs, type NewFile, SNIFF_BYTES } from '../../src/paste/files.ts';

/** A backend's file bytes over a fresh, empty store, for the contract below. */
export interface FileBlobsBackend {
  blobs: FileBlobs;
  /** Where the test spools its uploads, as the server's multipart parser does. */
  tmpDir: string;
  /** What the store holds under `sha256`, read from the store itself: how many copies, and their bytes in all. */
  stored(sha256: string): Promise<{ copies: number; bytes: number }>;
}

const sha = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

/** Bytes the store has not seen: a new blob each call. */
const fresh = (n: number): Buffer => randomBytes(n);

/** `bytes` spooled to a new file in `tmpDir`, described as `said` (by default what they are). */
async function spool(
  b: FileBlobsBackend,
  bytes: Buffer,
  said: { size?: number; sha256?: string } = {},
): Promise<NewFile> {
  const path = join(b.tmpDir, `upload-${randomBytes(8).toString('hex')}`);
  await writeFile(path, bytes, { mode: 0o600 });
  return {
    name: 'f.bin',
    type: 'application/octet-stream',
    size: said.size ?? bytes.length,
    sha256: said.sha256 ?? sha(bytes),
    path,
  };
}

const gone = (path: string): Promise<boolean> =>
  access(path).then(
    () => false,
    () => true,
  );

/** What `open` finds, read whole: its size, its head and its stream's bytes. */
async function readBack(
  blobs: FileBlobs,
  sha256: string,
): Promise<{ size: number; head: Buffer; body: Buffer } | null> {
  const got = await blobs.open(sha256);
  if (got === null) return null;
  return { size: got.size, head: Buffer.from(got.head), body: await buffer(got.stream()) };
}

/** Asserts the store holds `bytes` under their hash, once, readable byte for byte. */
async function holds(b: FileBlobsBackend, bytes: Buffer): Promise<void> {
  const read = await readBack(b.blobs, sha(bytes));
  assert.ok(read !== null, 'the bytes are there');
  assert.equal(read.size, bytes.length);
  assert.deepEqual(read.head, bytes.subarray(0, SNIFF_BYTES), 'the head is the first bytes');
  assert.ok(read.body.equals(bytes), 'read back byte for byte');
  assert.deepEqual(await b.stored(sha(bytes)), { copies: 1, bytes: bytes.length });
}

/**
 * What every `FileBlobs` promises (src/paste/files.ts; docs/files.md, Storing them): declared
 * once, run on the data folder, PostgreSQL and an S3-compatible bucket by
 * test/contract/file-blobs.test.ts.
 */
export function fileBlobsContract(name: string, open: () => Promise<FileBlobsBackend>): void {
  describe(`FileBlobs: ${name}`, () => {
    test('bytes put are read back identical (size, first bytes, stream), and the spooled file goes', async () => {
      const b = await open();
      const bytes = fresh(1000);
      const file = await spool(b, bytes);
      await b.blobs.put(file);
      assert.ok(await gone(file.path), 'the spooled file was moved or removed');
      await holds(b, bytes);
      // Each stream reads them anew.
      const again = await b.blobs.open(file.sha256);
      assert.ok((await buffer((again as NonNullable<typeof again>).stream())).equals(bytes));
    });

    test('empty bytes and bytes shorter than the head are kept as they are', async () => {
      const b = await open();
      for (const bytes of [Buffer.alloc(0), Buffer.from('GIF8')]) {
        await b.blobs.put(await spool(b, bytes));
        await holds(b, bytes);
      }
    });

    test('bytes never put, or put under another hash, are not there', async () => {
      const b = await open();
      await b.blobs.put(await spool(b, fresh(64)));
      assert.equal(await b.blobs.open(sha(fresh(64))), null);
      assert.deepEqual(await b.stored(sha(fresh(64))), { copies: 0, bytes: 0 });
    });

    test('a second put of the same bytes stores one copy, and its spooled file goes too', async () => {
      const b = await open();
      const bytes = fresh(4096);
      await b.blobs.put(await spool(b, bytes));
      const second = await spool(b, bytes);
      await b.blobs.put(second);
      assert.ok(await gone(second.path));
      await holds(b, bytes);
    });

    test('puts of the same bytes at once all succeed and store one copy', async () => {
      const b = await open();
      const bytes = fresh(300 * 1024);
      const spooled = await Promise.all([1, 2, 3].map(() => spool(b, bytes)));
      await Promise.all(spooled.map((f) => b.blobs.put(f)));
      for (const f of spooled) assert.ok(await gone(f.path));
      await holds(b, bytes);
    });

    test('a streamed read of several MiB is byte-identical', async () => {
      const b = await open();
      // Not a whole number of any chunk or buffer size.
      const bytes = fresh(5 * 1024 * 1024 + 12_345);
      await b.blobs.put(await spool(b, bytes));
      await holds(b, bytes);
    });

    test('remove makes the bytes unreadable at once; removing bytes not there is no error', async () => {
      const b = await open();
      const bytes = fresh(2048);
      const kept = fresh(2048);
      await b.blobs.put(await spool(b, bytes));
      await b.blobs.put(await spool(b, kept));
      await b.blobs.remove(sha(bytes));
      assert.equal(await b.blobs.open(sha(bytes)), null);
      assert.deepEqual(await b.stored(sha(bytes)), { copies: 0, bytes: 0 });
      await b.blobs.remove(sha(bytes));
      await b.blobs.remove(sha(fresh(8)));
      // Only those bytes went.
      await holds(b, kept);
    });

    test('bytes removed can be put again', async () => {
      const b = await open();
      const bytes = fresh(700 * 1024);
      await b.blobs.put(await spool(b, bytes));
      await b.blobs.remove(sha(bytes));
      await b.blobs.put(await spool(b, bytes));
      await holds(b, bytes);
    });

    test('a spooled file shorter or longer than its size, or not hashing to its SHA-256, is refused and leaves nothing', async () => {
      const b = await open();
      const bytes = fresh(300 * 1024);
      const cases: [string, NewFile][] = [
        ['short', await spool(b, bytes.subarray(0, bytes.length - 1), { size: bytes.length, sha256: sha(bytes) })],
        ['long', await spool(b, Buffer.concat([bytes, Buffer.from('x')]), { size: bytes.length, sha256: sha(bytes) })],
        ['other bytes', await spool(b, fresh(bytes.length), { sha256: sha(bytes) })],
      ];
      for (const [what, file] of cases) {
        await assert.rejects(b.blobs.put(file), `${what}: refused`);
        assert.ok(await gone(file.path), `${what}: the spooled file goes`);
        assert.equal(await b.blobs.open(sha(bytes)), null, `${what}: nothing is readable under the hash`);
        assert.deepEqual(await b.stored(sha(bytes)), { copies: 0, bytes: 0 }, `${what}: nothing is stored`);
      }
      // A refused put never stands in the way of the true bytes.
      await b.blobs.put(await spool(b, bytes));
      await holds(b, bytes);
    });
  });
}
