import type { Config } from '../config.ts';
import type { FileBlobs } from '../paste/files.ts';
import { CachedFileBlobs } from './cached.ts';

/**
 * Where a backend's files' bytes go (README, Files): to the FILE_STORE bucket, or to the
 * backend's own `local` blobs. The S3 client is loaded only for a bucket.
 */
export async function fileBlobsFor(config: Pick<Config, 'fileStore'>, local: () => FileBlobs): Promise<FileBlobs> {
  if (config.fileStore === null) return local();
  const { S3FileBlobs } = await import('./s3.ts');
  return new S3FileBlobs(config.fileStore);
}

/**
 * The server's files' bytes: `blobs` with a quarter of PASTE_CACHE_MB of them kept in memory
 * (files/cached.ts), none when it is 0. Tools that walk every file (backup, import) use
 * `blobs` alone.
 */
export function servedFileBlobs(config: Pick<Config, 'pasteCacheBytes'>, blobs: FileBlobs): FileBlobs {
  return config.pasteCacheBytes === 0 ? blobs : new CachedFileBlobs(blobs, config.pasteCacheBytes / 4);
}
