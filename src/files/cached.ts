import { Readable } from 'node:stream';
import { evictSecondChance } from '../cache/second-chance.ts';
import type { FileBlobs, NewFile, StoredBytes } from '../paste/files.ts';

interface Entry {
  bytes: Buffer;
  head: Buffer;
  /** Read since eviction last passed it: it gets a second chance. */
  used: boolean;
}

/**
 * Files' bytes kept in memory in front of where they are stored, up to `maxBytes` in all and
 * a quarter of that per file (README, Files). Bytes are content-addressed, so what is kept
 * never goes stale; whoever asks has passed the paste's read rules first, and bytes removed
 * leave memory with the store's copy.
 */
export class CachedFileBlobs implements FileBlobs {
  readonly #map = new Map<string, Entry>();
  /** Reads under way, so that many readers of one file read it once. */
  readonly #loading = new Map<string, Promise<StoredBytes | null>>();
  #bytes = 0;
  /** Moves at each removal's start and end: a read that saw it move keeps nothing. */
  #removals = 0;

  constructor(
    private readonly blobs: FileBlobs,
    readonly maxBytes: number,
  ) {}

  put(file: NewFile): Promise<void> {
    return this.blobs.put(file);
  }

  open(sha256: string): Promise<StoredBytes | null> {
    const e = this.#map.get(sha256);
    if (e !== undefined) {
      e.used = true;
      return Promise.resolve(whole(e.bytes, e.head));
    }
    const loading = this.#loading.get(sha256);
    if (loading !== undefined) return loading;
    const load = this.#load(sha256).finally(() => {
      if (this.#loading.get(sha256) === load) this.#loading.delete(sha256);
    });
    this.#loading.set(sha256, load);
    return load;
  }

  async #load(sha256: string): Promise<StoredBytes | null> {
    const removals = this.#removals;
    const stored = await this.blobs.open(sha256);
    if (stored === null || stored.size > this.maxBytes / 4) return stored;
    const chunks: Buffer[] = [];
    try {
      for await (const c of stored.stream()) chunks.push(c as Buffer);
    } catch (err) {
      // Removed between the open and the read (the sweep): gone, as an open after it answers, not a fault.
      if ((await this.blobs.open(sha256)) === null) return null;
      throw err;
    }
    const bytes = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
    if (bytes.length !== stored.size) throw new Error(`the bytes ${sha256} are not the size stored`);
    // Removed while being read: served to the reader already let in, but not kept.
    if (removals === this.#removals && this.#loading.has(sha256)) this.#keep(sha256, bytes, stored.head);
    return whole(bytes, stored.head);
  }

  #keep(sha256: string, bytes: Buffer, head: Buffer): void {
    evictSecondChance(
      this.#map,
      () => this.#bytes + bytes.length > this.maxBytes,
      (k) => this.#forget(k),
    );
    this.#map.set(sha256, { bytes, head, used: false });
    this.#bytes += bytes.length;
  }

  #forget(sha256: string): void {
    const e = this.#map.get(sha256);
    if (e === undefined) return;
    this.#map.delete(sha256);
    this.#bytes -= e.bytes.length;
  }

  async remove(sha256: string): Promise<void> {
    this.#letGo(sha256);
    try {
      await this.blobs.remove(sha256);
    } finally {
      // A read that finished while the store removed them kept bytes that are now gone.
      this.#letGo(sha256);
    }
  }

  /** Forgets the bytes, and tells a read of them under way (#removals moved) to keep nothing. */
  #letGo(sha256: string): void {
    this.#removals++;
    this.#forget(sha256);
    this.#loading.delete(sha256);
  }

  /** Bytes held in memory now. */
  get bytes(): number {
    return this.#bytes;
  }
}

/** Bytes held whole: sent in one write (pipeline/file-reply.ts), or streamed to those that read streams. */
const whole = (bytes: Buffer, head: Buffer): StoredBytes => ({
  size: bytes.length,
  head,
  whole: bytes,
  stream: () => Readable.from([bytes], { objectMode: false }),
});
