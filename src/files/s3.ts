import { createReadStream } from 'node:fs';
import { unlink } from 'node:fs/promises';
import { Readable } from 'node:stream';
import {
  DeleteObjectCommand,
  GetObjectCommand,
  type GetObjectCommandOutput,
  HeadObjectCommand,
  PutObjectCommand,
  S3Client,
  type S3ClientConfig,
} from '@aws-sdk/client-s3';
import type { S3Target } from '../config/file-store.ts';
import { type FileBlobs, type NewFile, SNIFF_BYTES, type StoredBytes } from '../paste/files.ts';
import { checkSpooled } from '../storage/fs.ts';

/**
 * The client's settings for a FILE_STORE bucket. Checksums only where an operation requires
 * them: S3-compatible servers refuse or mangle the CRC headers the SDK sends by default.
 */
export function s3ClientConfig(t: S3Target): S3ClientConfig {
  return {
    region: t.region,
    ...(t.endpoint === null ? {} : { endpoint: t.endpoint }),
    forcePathStyle: t.forcePathStyle,
    credentials: { accessKeyId: t.accessKeyId, secretAccessKey: t.secretAccessKey },
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  };
}

/** The key of some bytes: `PREFIX/ab/cd/<sha256>`, so no folder of a listing tool grows huge. */
export function s3Key(prefix: string, sha256: string): string {
  const key = `${sha256.slice(0, 2)}/${sha256.slice(2, 4)}/${sha256}`;
  return prefix === '' ? key : `${prefix}/${key}`;
}

/** A 404 from the bucket: HeadObject's NotFound (it has no body) or GetObject's NoSuchKey. */
const notFound = (err: unknown): boolean =>
  (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404 ||
  ['NotFound', 'NoSuchKey'].includes((err as { name?: string }).name ?? '');

/**
 * Files' bytes in an S3-compatible bucket (FILE_STORE=s3://…). Only single keys are read,
 * written and removed: what a paste holds is in the paste's own store, and the bucket is never
 * listed. A put is durable once PutObject answered 200.
 */
export class S3FileBlobs implements FileBlobs {
  readonly #client: S3Client;

  constructor(private readonly target: S3Target) {
    this.#client = new S3Client(s3ClientConfig(target));
  }

  #key(sha256: string): string {
    return s3Key(this.target.prefix, sha256);
  }

  /** Sends one request; a failure other than a 404 names the bucket, the request and the answer for the server log. */
  async #send<O>(what: string, sha256: string, request: () => Promise<O>): Promise<O> {
    try {
      return await request();
    } catch (err) {
      if (notFound(err)) throw err;
      const status = (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
      const why = `${(err as Error).name}${status === undefined ? '' : `, HTTP ${status}`}`;
      throw new Error(`${this.target.describe}: ${what} of ${this.#key(sha256)} failed (${why})`, { cause: err });
    }
  }

  async #size(sha256: string): Promise<number | null> {
    const Key = this.#key(sha256);
    try {
      const head = await this.#send('HeadObject', sha256, () =>
        this.#client.send(new HeadObjectCommand({ Bucket: this.target.bucket, Key })),
      );
      return head.ContentLength ?? 0;
    } catch (err) {
      if (notFound(err)) return null;
      throw err;
    }
  }

  async put(file: NewFile): Promise<void> {
    const Key = this.#key(file.sha256);
    // Also spares the client a body shorter than its Content-Length, which it waits on for minutes.
    await checkSpooled(file);
    try {
      // Bytes already there (another paste's) are not sent again.
      if ((await this.#size(file.sha256)) === file.size) return;
      // Streamed from the spooled file with its length known: one PutObject, never held in memory.
      const Body = createReadStream(file.path);
      await this.#send('PutObject', file.sha256, () =>
        this.#client.send(
          new PutObjectCommand({
            Bucket: this.target.bucket,
            Key,
            Body,
            ContentLength: file.size,
            ContentType: 'application/octet-stream',
          }),
        ),
      );
    } finally {
      await unlink(file.path).catch(() => undefined);
    }
  }

  async open(sha256: string): Promise<StoredBytes | null> {
    const size = await this.#size(sha256);
    if (size === null) return null;
    const head = size === 0 ? Buffer.alloc(0) : await this.#range(sha256, Math.min(SNIFF_BYTES, size));
    if (head === null) return null;
    const Key = this.#key(sha256);
    const get = (): Promise<GetObjectCommandOutput> =>
      this.#send('GetObject', sha256, () =>
        this.#client.send(new GetObjectCommand({ Bucket: this.target.bucket, Key })),
      );
    async function* body(): AsyncGenerator<Buffer> {
      yield* (await get()).Body as Readable;
    }
    return { size, head, stream: () => Readable.from(body(), { objectMode: false }) };
  }

  /** The first `n` bytes, or null when they were removed meanwhile. */
  async #range(sha256: string, n: number): Promise<Buffer | null> {
    const Key = this.#key(sha256);
    try {
      const answer = await this.#send('GetObject', sha256, () =>
        this.#client.send(new GetObjectCommand({ Bucket: this.target.bucket, Key, Range: `bytes=0-${n - 1}` })),
      );
      return Buffer.from((await answer.Body?.transformToByteArray()) ?? []).subarray(0, n);
    } catch (err) {
      if (notFound(err)) return null;
      throw err;
    }
  }

  async remove(sha256: string): Promise<void> {
    const Key = this.#key(sha256);
    // S3 answers a delete of a key that is not there as one that was.
    await this.#send('DeleteObject', sha256, () =>
      this.#client.send(new DeleteObjectCommand({ Bucket: this.target.bucket, Key })),
    );
  }
}
