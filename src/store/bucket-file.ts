import { readStateFile, type DurableFiles } from './files.ts';

/**
 * Reads the rate-limit buckets saved by `saveBuckets`. A missing or unparsable file yields
 * `{}`: losing buckets only forgives some requests, which must not stop the server starting.
 * Other I/O errors (permissions, a folder in the way) propagate, since they need an operator.
 */
export async function loadBuckets(file: string): Promise<unknown> {
  return (await readStateFile(file)) ?? {};
}

/** Atomically writes the limiter's buckets to `file` (every few seconds and on shutdown). */
export async function saveBuckets(files: DurableFiles, file: string, limiter: { snapshot(): unknown }): Promise<void> {
  await files.writeFile(file, JSON.stringify(limiter.snapshot()));
}

/**
 * The limiter's buckets file, written only when the buckets changed since it was last
 * written or read: an idle server, or one whose tokens are all unlimited, leaves it alone
 * rather than rewriting the same `{}` durably every few seconds.
 */
export class BucketFile {
  /** The limiter's change count the file holds, or null when not known. */
  #saved: number | null = null;

  constructor(
    private readonly files: DurableFiles,
    readonly file: string,
  ) {}

  /** Replaces the limiter's buckets with the file's (README, Rate limits: they survive a restart). */
  async load(limiter: { restore(snap: unknown): void; readonly changes: number }): Promise<void> {
    limiter.restore(await loadBuckets(this.file));
    this.#saved = limiter.changes;
  }

  async save(limiter: { snapshot(): unknown; readonly changes: number }): Promise<void> {
    const changes = limiter.changes;
    if (changes === this.#saved) return;
    await saveBuckets(this.files, this.file, limiter);
    this.#saved = changes;
  }
}
