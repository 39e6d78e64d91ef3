import type { Config } from '../config.ts';
import type { FileBlobs } from '../paste/files.ts';

/**
 * Where a backend's files' bytes go (README, Files): to the FILE_STORE bucket, or to the
 * backend's own `local` blobs. The S3 client is loaded only for a bucket.
 */
export async function fileBlobsFor(config: Pick<Config, 'fileStore'>, local: () => FileBlobs): Promise<FileBlobs> {
  if (config.fileStore === null) return local();
  const { S3FileBlobs } = await import('./s3.ts');
  return new S3FileBlobs(config.fileStore);
}
