import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { test } from 'node:test';
import { multipartBoundary, readMultipart } from '../../src/http/multipart.ts';
import { multipart } from '../helpers/multipart-body.ts';

test('a body whose file parts end inside a chunk that filled the disk write buffer is read to its end', {
  timeout: 20_000,
}, async () => {
  const dir = await mkdtemp(join(tmpdir(), 'multipart-drain-'));
  try {
    // Four files of 19,000 bytes in 64 KiB chunks: a part ends in the chunk whose write asked the body to wait.
    const files = [0, 1, 2, 3].map((i) => ({ name: `p${i}`, bytes: Buffer.alloc(19_000, i) }));
    const { body, type } = multipart({ content: 'x' }, files);
    const req = new PassThrough();
    const read = readMultipart(req as unknown as IncomingMessage, multipartBoundary(type) as string, {
      tmpDir: dir,
      fileField: 'file',
      maxFileBytes: 20_000,
      maxFiles: 10,
      maxFieldBytes: 100_000,
    });
    for (let i = 0; i < body.length; i += 65_536) req.write(body.subarray(i, i + 65_536));
    req.end();
    const got = await read;
    assert.deepEqual(
      got.files.map((f) => f.size),
      [19_000, 19_000, 19_000, 19_000],
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
