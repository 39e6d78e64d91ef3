import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import S3rver from 's3rver';
import { fileStoreOf } from '../../src/config/file-store.ts';
import { PgFileBlobs } from '../../src/pg/file-bytes.ts';
import { S3FileBlobs, s3Key } from '../../src/files/s3.ts';
import { DiskFileBlobs } from '../../src/store/file-bytes.ts';
import { BACKEND } from '../helpers/backend.ts';
import { atEnd, freshDatabase, freshFolder } from '../helpers/fresh-storage.ts';
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

const BUCKET = 'contract-files';
const KEYS = { S3_ACCESS_KEY_ID: 'S3RVER', S3_SECRET_ACCESS_KEY: 'S3RVER' };

/** One S3-compatible server on loopback for this file (test/api/v1/files-s3.test.ts does the same), started when first asked for. */
let bucket: Promise<{ endpoint: string; client: S3Client }> | undefined;

async function startBucket(): Promise<{ endpoint: string; client: S3Client }> {
  const dir = await mkdtemp(join(tmpdir(), 'paste-s3-'));
  const server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory: dir,
    configureBuckets: [{ name: BUCKET }],
  });
  const { port } = await server.run();
  const endpoint = `http://127.0.0.1:${port}`;
  const client = new S3Client({
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: KEYS.S3_ACCESS_KEY_ID, secretAccessKey: KEYS.S3_SECRET_ACCESS_KEY },
  });
  atEnd(async () => {
    client.destroy();
    await server.close();
    await rm(dir, { recursive: true, force: true });
  });
  return { endpoint, client };
}

let prefixes = 0;

/** A FILE_STORE bucket, as files/open.ts makes it, under a prefix of its own. */
async function s3(): Promise<FileBlobsBackend> {
  bucket ??= startBucket();
  const { endpoint, client } = await bucket;
  const prefix = `contract/${++prefixes}`;
  const problems: string[] = [];
  const target = fileStoreOf(
    { FILE_STORE: `s3://${BUCKET}/${prefix}/`, S3_ENDPOINT: endpoint, ...KEYS },
    problems,
    () => true,
  );
  if (target === null || problems.length > 0) throw new Error(problems.join('; '));
  const { dir } = await freshFolder();
  return {
    blobs: new S3FileBlobs(target),
    tmpDir: dir,
    async stored(sha256) {
      // The test lists the bucket; the server never does.
      const out = await client.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: s3Key(prefix, sha256) }));
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
