import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { HttpError } from '../../src/http/errors.ts';
import {
  MAX_PART_HEADER_BYTES,
  type MultipartLimits,
  multipartBoundary,
  readMultipart,
} from '../../src/http/multipart.ts';

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'multipart-test-'));
});
after(() => rm(dir, { recursive: true, force: true }));

const limits = (over: Partial<MultipartLimits> = {}): MultipartLimits => ({
  tmpDir: dir,
  fileField: 'file',
  maxFileBytes: 1_000_000,
  maxFiles: 10,
  maxFieldBytes: 100_000,
  ...over,
});

const B = 'XyZ-boundary';

const field = (name: string, value: string): string =>
  `--${B}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
const filePart = (filename: string, bytes: Buffer | string, extra = ''): Buffer =>
  Buffer.concat([
    Buffer.from(
      `--${B}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"${extra}\r\nContent-Type: Text/Plain; charset=utf-8\r\n\r\n`,
    ),
    Buffer.from(bytes),
    Buffer.from('\r\n'),
  ]);
const END = `--${B}--\r\n`;

/** Feeds `body` to the parser in chunks of `size` bytes (1: every boundary split everywhere). */
function parse(body: Buffer, size: number, l = limits(), end = true) {
  const req = new PassThrough() as unknown as IncomingMessage & PassThrough;
  const parsed = readMultipart(req, B, l, new Set(['remove_file']));
  for (let i = 0; i < body.length; i += size) req.write(body.subarray(i, i + size));
  if (end) req.end();
  return { parsed, req };
}

const spooled = async (): Promise<string[]> => (await readdir(dir)).filter((n) => n.startsWith('upload-'));

describe('multipartBoundary', () => {
  test('finds the boundary of multipart/form-data only', () => {
    assert.equal(multipartBoundary('multipart/form-data; boundary=abc'), 'abc');
    assert.equal(multipartBoundary('Multipart/Form-Data; charset=utf-8; boundary="a b:c"'), 'a b:c');
    assert.equal(multipartBoundary('multipart/mixed; boundary=abc'), null);
    assert.equal(multipartBoundary('multipart/form-data'), null);
    assert.equal(multipartBoundary(`multipart/form-data; boundary=${'x'.repeat(71)}`), null);
    assert.equal(multipartBoundary(undefined), null);
  });
});

describe('readMultipart', () => {
  const bytes = Buffer.from(`first line\r\n--${B.slice(0, 5)} not a boundary\r\n\r\n \r--${B} not after CRLF\r\n`);
  const body = Buffer.concat([
    Buffer.from(
      `preamble to ignore\r\n${field('title', 'héllo')}${field('remove_file', 'a')}${field('remove_file', 'b')}`,
    ),
    filePart('shot.png', bytes),
    filePart('b\\"q.txt', '', "; filename*=UTF-8''r%C3%A9sum%C3%A9.txt"),
    Buffer.from(END),
  ]);

  for (const size of [1, 7, 64, body.length]) {
    test(`reads fields and files alike in chunks of ${size} bytes`, async () => {
      const { parsed } = parse(body, size);
      const m = await parsed;
      assert.equal(m.fields['title'], 'héllo');
      assert.equal(m.fields['remove_file'], 'a\nb');
      assert.equal(m.files.length, 2);
      const [one, two] = m.files;
      assert.equal(one?.name, 'shot.png');
      assert.equal(one?.type, 'text/plain');
      assert.equal(one?.size, bytes.length);
      assert.equal(one?.sha256, createHash('sha256').update(bytes).digest('hex'));
      assert.deepEqual(await readFile(one?.path as string), bytes);
      assert.equal(two?.name, 'résumé.txt', 'filename* wins over filename');
      assert.equal(two?.size, 0);
      for (const f of m.files) await rm(f.path);
    });
  }

  test('a body without its final boundary is a 400, and leaves no spooled file', async () => {
    const cut = Buffer.concat([filePart('a.bin', Buffer.alloc(5000, 1)).subarray(0, 3000)]);
    await assert.rejects(parse(cut, 100).parsed, (err: unknown) => err instanceof HttpError && err.status === 400);
    assert.deepEqual(await spooled(), []);
  });

  test('a part header larger than the limit is a 400, split or not', async () => {
    const huge = Buffer.from(
      `--${B}\r\nContent-Disposition: form-data; name="x"\r\nX-Pad: ${'a'.repeat(MAX_PART_HEADER_BYTES)}\r\n\r\nv\r\n${END}`,
    );
    for (const size of [huge.length, 512])
      await assert.rejects(parse(huge, size).parsed, (err: unknown) => err instanceof HttpError && err.status === 400);
  });

  test('a part without form-data disposition or name is a 400', async () => {
    const bad = Buffer.from(`--${B}\r\nContent-Type: text/plain\r\n\r\nv\r\n${END}`);
    await assert.rejects(parse(bad, 10).parsed, (err: unknown) => err instanceof HttpError && err.status === 400);
  });

  test('many parts: up to the field limit is read, one more is a 400; files past maxFiles are a 400', async () => {
    const fields = Array.from({ length: 64 }, (_, i) => field(`f${i}`, String(i))).join('');
    const m = await parse(Buffer.from(fields + END), 999).parsed;
    assert.equal(Object.keys(m.fields).length, 64);
    await assert.rejects(
      parse(Buffer.from(fields + field('f64', 'x') + END), 999).parsed,
      (err: unknown) => err instanceof HttpError && err.status === 400,
    );
    const files = Buffer.concat([...Array.from({ length: 4 }, (_, i) => filePart(`${i}`, 'x')), Buffer.from(END)]);
    await assert.rejects(
      parse(files, 50, limits({ maxFiles: 3 })).parsed,
      (err: unknown) => err instanceof HttpError && err.status === 400,
    );
    assert.deepEqual(await spooled(), []);
  });

  test('an epilogue after the final boundary is read past and not kept', async () => {
    const { parsed, req } = parse(Buffer.from(field('title', 'a') + END), 64, limits(), false);
    for (let i = 0; i < 64; i++) req.write(Buffer.alloc(64 * 1024, 0x65));
    req.end();
    const m = await parsed;
    assert.equal(m.fields['title'], 'a');
  });

  test('a repeated field is a 400 unless it may repeat', async () => {
    const twice = Buffer.from(field('title', 'a') + field('title', 'b') + END);
    await assert.rejects(parse(twice, 9).parsed, (err: unknown) => err instanceof HttpError && err.status === 400);
  });

  test('a file past maxFileBytes is a 413 as soon as it is known, and its spooled bytes are removed', async () => {
    const { parsed, req } = parse(filePart('big', Buffer.alloc(2048, 2)), 256, limits({ maxFileBytes: 1024 }), false);
    // The body never ends: the refusal comes from the bytes seen so far.
    await assert.rejects(parsed, (err: unknown) => err instanceof HttpError && err.status === 413);
    req.destroy();
    assert.deepEqual(await spooled(), []);
  });

  test('text fields past maxFieldBytes are a 413', async () => {
    const big = Buffer.from(field('content', 'x'.repeat(2000)) + END);
    await assert.rejects(
      parse(big, 100, limits({ maxFieldBytes: 1000 })).parsed,
      (err: unknown) => err instanceof HttpError && err.status === 413,
    );
  });

  test('a client that leaves mid-file gets client_closed, and its spooled file is removed', async () => {
    const { parsed, req } = parse(filePart('cut', Buffer.alloc(4096, 3)).subarray(0, 3000), 500, limits(), false);
    await new Promise((r) => setImmediate(r));
    req.destroy();
    await assert.rejects(parsed, (err: unknown) => err instanceof HttpError && err.code === 'client_closed');
    assert.deepEqual(await spooled(), []);
  });
});
