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
