import type { StoredBucket } from '../ratelimit/bucket.ts';
import { readStateFile, stateJson, type DurableFiles } from './files.ts';
import { KeyedMutex } from './mutex.ts';

/**
 * Reads the rate-limit buckets saved by `saveBuckets`. A missing or unparsable file yields
 * `{}`: losing buckets only forgives some requests, which must not stop the server starting.
 * Other I/O errors (permissions, a folder in the way) propagate, since they need an operator.
 */
export async function loadBuckets(file: string): Promise<unknown> {
  return (await readStateFile(file)) ?? {};
}

/** What is saved of a limiter: its buckets by key, as they are when each is come to. */
interface Buckets {
  entries(): Iterable<readonly [string, Readonly<StoredBucket>]>;
}

/**
 * Atomically writes the limiter's buckets to `file` (every few seconds and on shutdown), a
 * chunk at a time (stateJson): the buckets of many clients (failed logins from as many
 * addresses) written in one go held every request for as long as that took.
 */
export async function saveBuckets(files: DurableFiles, file: string, limiter: Buckets): Promise<void> {
  const text = await stateJson(limiter.entries(), (b) => ({
    tokens: b.tokens,
    updatedAt: b.updatedAt,
    limit: b.limit,
  }));
  await files.writeFile(file, text);
}

/**
 * The limiter's buckets file, written only when the buckets changed since it was last
 * written or read: an idle server, or one whose tokens are all unlimited, leaves it alone
 * rather than rewriting the same `{}` durably every few seconds.
 */
export class BucketFile {
  /** The limiter's change count the file holds, or null when not known. */
  #saved: number | null = null;
  /** Saves, one at a time (the one key), so the last written is the newest. */
  readonly #saves = new KeyedMutex();

  constructor(
    private readonly files: DurableFiles,
    readonly file: string,
  ) {}

  /** Replaces the limiter's buckets with the file's (README, Rate limits: they survive a restart). */
  async load(limiter: { restore(snap: unknown): void; readonly changes: number }): Promise<void> {
    limiter.restore(await loadBuckets(this.file));
    this.#saved = limiter.changes;
  }

  save(limiter: Buckets & { readonly changes: number }): Promise<void> {
    return this.#saves.run('save', () => this.#save(limiter));
  }

  async #save(limiter: Buckets & { readonly changes: number }): Promise<void> {
    // Taken before the buckets are read: a change made while they are written is saved next time.
    const changes = limiter.changes;
    if (changes === this.#saved) return;
    await saveBuckets(this.files, this.file, limiter);
    this.#saved = changes;
  }
}
