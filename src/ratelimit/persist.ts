import { readStateFile } from '../store/files.ts';
import type { DurableFiles } from '../store/files.ts';
import type { RateLimiter } from './bucket.ts';

/**
 * Reads a bucket snapshot for `RateLimiter.restore`. A missing or unparsable file yields
 * `{}`: losing buckets only forgives some requests, which must not stop the server starting.
 * Other I/O errors (permissions, a folder in the way) propagate, since they need an operator.
 */
export async function loadBuckets(file: string): Promise<unknown> {
  return (await readStateFile(file)) ?? {};
}

/** Atomically writes the limiter's buckets to `file` (on graceful shutdown). */
export async function saveBuckets(files: DurableFiles, file: string, limiter: RateLimiter): Promise<void> {
  await files.writeFile(file, JSON.stringify(limiter.snapshot()));
}
