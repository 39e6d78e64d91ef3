import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { describe, test } from 'node:test';
import { CachedFileBlobs } from '../../src/files/cached.ts';
import type { FileBlobs, NewFile, StoredBytes } from '../../src/paste/files.ts';

/** Bytes in memory, counting the opens that reach them and streaming in 4-byte pieces, as a store does. */
class CountedBlobs implements FileBlobs {
  readonly held = new Map<string, Buffer>();
  opens = 0;
  /** When set, an open waits for it before streaming (a slow store). */
  gate: Promise<void> | null = null;

  put(_file: NewFile): Promise<void> {
    return Promise.resolve();
  }

  async open(sha256: string): Promise<StoredBytes | null> {
    this.opens++;
    const bytes = this.held.get(sha256);
    if (bytes === undefined) return null;
    await this.gate;
    const pieces = Array.from({ length: Math.ceil(bytes.length / 4) }, (_, i) => bytes.subarray(i * 4, i * 4 + 4));
    return { size: bytes.length, head: bytes.subarray(0, 12), stream: () => Readable.from(pieces) };
  }

  /** Holds every open until the function returned is called. */
  hold(): () => void {
    let open!: () => void;
    this.gate = new Promise((resolve) => (open = resolve));
    return open;
  }

  /** When set, a remove waits for it before the bytes go (a slow store). */
  removeGate: Promise<void> | null = null;

  async remove(sha256: string): Promise<void> {
    await this.removeGate;
    this.held.delete(sha256);
  }
}

async function read(s: StoredBytes): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of s.stream()) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

const KEY = (n: number): string => String(n).padStart(64, '0');

describe('CachedFileBlobs', () => {
  test('a second open is answered from memory, whole, with the same bytes', async () => {
    const store = new CountedBlobs();
    store.held.set(KEY(1), Buffer.from('the bytes of a file'));
    const cached = new CachedFileBlobs(store, 400);
    const first = await cached.open(KEY(1));
    const second = await cached.open(KEY(1));
    assert.equal(store.opens, 1);
    assert.deepEqual(second?.whole, Buffer.from('the bytes of a file'));
    assert.deepEqual(await read(second as StoredBytes), Buffer.from('the bytes of a file'));
    assert.deepEqual(await read(first as StoredBytes), Buffer.from('the bytes of a file'));
    assert.equal(second?.size, 19);
    assert.deepEqual(second?.head, Buffer.from('the bytes of'));
  });

  test('removed bytes are no longer served from memory', async () => {
    const store = new CountedBlobs();
    store.held.set(KEY(1), Buffer.from('gone soon'));
    const cached = new CachedFileBlobs(store, 400);
    assert.ok(await cached.open(KEY(1)));
    await cached.remove(KEY(1));
    assert.equal(await cached.open(KEY(1)), null);
    assert.equal(cached.bytes, 0);
  });

  test('bytes removed while being read are served to that reader but not kept', async () => {
    const store = new CountedBlobs();
    store.held.set(KEY(1), Buffer.from('read while removed'));
    const open = store.hold();
    const cached = new CachedFileBlobs(store, 400);
    const reading = cached.open(KEY(1));
    await cached.remove(KEY(1));
    open();
    assert.deepEqual((await reading)?.whole, Buffer.from('read while removed'));
    assert.equal(cached.bytes, 0);
    assert.equal(await cached.open(KEY(1)), null);
  });

  test('bytes read while their removal is under way are not kept once they are gone', async () => {
    const store = new CountedBlobs();
    store.held.set(KEY(1), Buffer.from('removed slowly'));
    let removed!: () => void;
    store.removeGate = new Promise((resolve) => (removed = resolve));
    const cached = new CachedFileBlobs(store, 400);
    const removing = cached.remove(KEY(1));
    // Let in before the bytes went: served, but memory must not outlive them.
    assert.deepEqual((await cached.open(KEY(1)))?.whole, Buffer.from('removed slowly'));
    removed();
    await removing;
    assert.equal(cached.bytes, 0);
    assert.equal(await cached.open(KEY(1)), null);
  });

  test('a read begun before a removal and one begun after it, both finishing, count the bytes once', async () => {
    const store = new CountedBlobs();
    const bytes = Buffer.from('put again after removal');
    store.held.set(KEY(1), bytes);
    const open = store.hold();
    const cached = new CachedFileBlobs(store, 400);
    const before = cached.open(KEY(1));
    await cached.remove(KEY(1));
    // Another paste brings the same bytes back, and a reader of it comes.
    store.held.set(KEY(1), bytes);
    const after = cached.open(KEY(1));
    open();
    await Promise.all([before, after]);
    assert.equal(cached.bytes, bytes.length);
    await cached.remove(KEY(1));
    assert.equal(cached.bytes, 0);
  });

  test('bytes removed between their open and their read are gone (null), not a failure', async () => {
    const store = new CountedBlobs();
    store.held.set(KEY(1), Buffer.from('swept midway'));
    const racing: FileBlobs = {
      put: (f) => store.put(f),
      remove: (sha) => store.remove(sha),
      async open(sha) {
        const s = await store.open(sha);
        if (s === null) return null;
        // The sweep removes the bytes once they are opened: reading them fails, as a file gone from disk does.
        await store.remove(sha);
        const gone = async function* (): AsyncGenerator<Buffer> {
          yield* [];
          throw Object.assign(new Error('ENOENT: no such file'), { code: 'ENOENT' });
        };
        return { ...s, stream: () => Readable.from(gone()) };
      },
    };
    const cached = new CachedFileBlobs(racing, 400);
    assert.equal(await cached.open(KEY(1)), null);
    assert.equal(cached.bytes, 0);
  });

  test('readers of one file at once read it from the store once', async () => {
    const store = new CountedBlobs();
    store.held.set(KEY(1), Buffer.from('many readers'));
    const open = store.hold();
    const cached = new CachedFileBlobs(store, 400);
    const all = Array.from({ length: 10 }, () => cached.open(KEY(1)));
    open();
    for (const s of await Promise.all(all)) assert.deepEqual(s?.whole, Buffer.from('many readers'));
    assert.equal(store.opens, 1);
  });

  test('holds at most its bound, the least recently read going first; a file over a quarter of it is streamed', async () => {
    const store = new CountedBlobs();
    for (let i = 1; i <= 5; i++) store.held.set(KEY(i), Buffer.alloc(100, i));
    store.held.set(KEY(9), Buffer.alloc(101, 9));
    const cached = new CachedFileBlobs(store, 400);
    for (let i = 1; i <= 4; i++) await cached.open(KEY(i));
    assert.equal(cached.bytes, 400);
    await cached.open(KEY(1));
    await cached.open(KEY(5));
    assert.equal(cached.bytes, 400);
    store.opens = 0;
    await cached.open(KEY(1));
    assert.equal(store.opens, 0, 'the one read since stays');
    await cached.open(KEY(2));
    assert.equal(store.opens, 1, 'the oldest unread went');
    const big = await cached.open(KEY(9));
    assert.equal(big?.whole, undefined);
    assert.deepEqual(await read(big as StoredBytes), Buffer.alloc(101, 9));
    assert.ok(cached.bytes <= 400);
  });
});
