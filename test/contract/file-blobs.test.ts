import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import { fileStoreOf } from '../../src/config/file-store.ts';
import { PgFileBlobs } from '../../src/pg/file-bytes.ts';
import { S3FileBlobs, s3Key } from '../../src/files/s3.ts';
import { DiskFileBlobs } from '../../src/store/file-bytes.ts';
import { BACKEND } from '../helpers/backend.ts';
import { atEnd, freshDatabase, freshFolder } from '../helpers/fresh-storage.ts';
import { directClient, S3_BUCKET, startS3, type TestS3 } from '../helpers/s3.ts';
import { type FileBlobsBackend, fileBlobsContract } from './file-blobs.ts';

/** The data folder's bytes, as store/open.ts makes them, over a fresh folder. */
async function dataFolder(): Promise<FileBlobsBackend> {
  const { dir, files } = await freshFolder();
  const at = (sha256: string): string => join(dir, 'files', sha256.slice(0, 2), sha256);
  return {
    blobs: new DiskFileBlobs(dir, files),
    tmpDir: join(dir, 'tmp'),
    async stored(sha256) {
      const size = await stat(at(sha256)).then(
        (s) => s.size,
        () => null,
      );
      return size === null ? { copies: 0, bytes: 0 } : { copies: 1, bytes: size };
    },
  };
}

/** PostgreSQL's chunked rows, as pg/open.ts makes them, over a fresh database. */
async function postgres(): Promise<FileBlobsBackend> {
  const { sql } = await freshDatabase();
  const { dir } = await freshFolder();
  return {
    blobs: new PgFileBlobs(sql),
    tmpDir: dir,
    async stored(sha256) {
      const [row] = await sql<{ copies: number; bytes: string | null }[]>`
        select (select count(*)::int from file_blobs where sha256 = ${sha256}) as copies,
               (select sum(octet_length(data)) from file_chunks where sha256 = ${sha256})::text as bytes`;
      return { copies: row?.copies ?? 0, bytes: Number(row?.bytes ?? 0) };
    },
  };
}

/** One S3-compatible server on loopback for this file (test/helpers/s3.ts), started when first asked for. */
let bucket: Promise<{ server: TestS3; client: S3Client }> | undefined;

async function startBucket(): Promise<{ server: TestS3; client: S3Client }> {
  const server = await startS3();
  const client = directClient(server);
  atEnd(async () => {
    client.destroy();
    await server.stop();
  });
  return { server, client };
}

let prefixes = 0;

/** A FILE_STORE bucket, as files/open.ts makes it, under a prefix of its own. */
async function s3(): Promise<FileBlobsBackend> {
  bucket ??= startBucket();
  const { server, client } = await bucket;
  const prefix = `contract/${++prefixes}`;
  const problems: string[] = [];
  const target = fileStoreOf({ ...server.env, FILE_STORE: `s3://${S3_BUCKET}/${prefix}/` }, problems, () => true);
  if (target === null || problems.length > 0) throw new Error(problems.join('; '));
  const { dir } = await freshFolder();
  return {
    blobs: new S3FileBlobs(target),
    tmpDir: dir,
    async stored(sha256) {
      // The test lists the bucket; the server never does.
      const out = await client.send(new ListObjectsV2Command({ Bucket: S3_BUCKET, Prefix: s3Key(prefix, sha256) }));
      const objects = out.Contents ?? [];
      return { copies: objects.length, bytes: objects.reduce((n, o) => n + (o.Size ?? 0), 0) };
    },
  };
}

if (BACKEND === 'postgres') fileBlobsContract('PostgreSQL', postgres);
else {
  fileBlobsContract('data folder', dataFolder);
  // The bucket holds the bytes whichever backend keeps the claims: its suite runs once, here.
  fileBlobsContract('S3-compatible bucket', s3);
}
