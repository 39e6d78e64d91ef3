import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { S3Client } from '@aws-sdk/client-s3';
import S3rver from 's3rver';

/** The bucket and keys `startS3` serves. */
export const S3_BUCKET = 'pastebin-files';
export const S3_KEYS = { S3_ACCESS_KEY_ID: 'S3RVER', S3_SECRET_ACCESS_KEY: 'S3RVER' };

export interface TestS3 {
  /** The FILE_STORE and S3_* variables of a server whose files go to this bucket under `prefix`. */
  readonly env: Record<string, string>;
  /** The S3 server itself (behind the pass-through), for a test's own client. */
  readonly direct: string;
  /** Every request the paste server made to the bucket, as `METHOD path?query`. */
  readonly asked: string[];
  /** While set, the bucket answers every request 503, as one that is down would. */
  down: boolean;
  stop(): Promise<void>;
}

/**
 * An S3-compatible server on loopback (`s3rver`, which does not check signatures), behind a
 * pass-through that notes what the paste server asks of it (README, Files: never a listing).
 */
export async function startS3(prefix = 'pastes/files'): Promise<TestS3> {
  const dir = await mkdtemp(join(tmpdir(), 'paste-s3-'));
  const s3 = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory: dir,
    configureBuckets: [{ name: S3_BUCKET }],
  });
  const { port } = await s3.run();
  const asked: string[] = [];
  const proxy = createServer((inbound, outbound) => {
    asked.push(`${inbound.method} ${inbound.url}`);
    if (out.down) {
      inbound.resume();
      outbound.writeHead(503).end();
      return;
    }
    const upstream = request(
      { host: '127.0.0.1', port, method: inbound.method, path: inbound.url, headers: inbound.headers },
      (answer) => {
        outbound.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(outbound);
      },
    );
    upstream.on('error', () => outbound.destroy());
    inbound.pipe(upstream);
  });
  await new Promise<void>((done) => proxy.listen(0, '127.0.0.1', done));
  const endpoint = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  const out: TestS3 = {
    env: { FILE_STORE: `s3://${S3_BUCKET}/${prefix}/`, S3_ENDPOINT: endpoint, S3_FORCE_PATH_STYLE: '1', ...S3_KEYS },
    direct: `http://127.0.0.1:${port}`,
    asked,
    down: false,
    async stop() {
      await new Promise((done) => proxy.close(done));
      await s3.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
  return out;
}

/** A client of the S3 server itself, past the pass-through: for a test to look in the bucket as the server never does. */
export const directClient = (s3: Pick<TestS3, 'direct'>): S3Client =>
  new S3Client({
    endpoint: s3.direct,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: S3_KEYS.S3_ACCESS_KEY_ID, secretAccessKey: S3_KEYS.S3_SECRET_ACCESS_KEY },
  });
