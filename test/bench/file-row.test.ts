import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { crc32, inflateSync } from 'node:zlib';
import { refServerArgv, removeTempDir, spawnServer, tempDir, type Child } from '../../bench/proc.ts';
import { benchPng, makeCredentials, type Seeded, seedPastes } from '../../bench/seed.ts';
import { inlineImageType } from '../../src/paste/files.ts';
import { type AppServer, req, startServer } from '../helpers/server.ts';

const MB = 1_048_576;

/** A PNG's chunks: type and data, each CRC checked. */
function chunks(png: Buffer): { type: string; data: Buffer }[] {
  const out: { type: string; data: Buffer }[] = [];
  for (let at = 8; at < png.length; ) {
    const length = png.readUInt32BE(at);
    const data = png.subarray(at + 8, at + 8 + length);
    assert.equal(png.readUInt32BE(at + 8 + length), crc32(png.subarray(at + 4, at + 8 + length)), 'CRC');
    out.push({ type: png.toString('latin1', at + 4, at + 8), data });
    at += 12 + length;
  }
  return out;
}

describe("the bench's 1 MB image", () => {
  test('is a real PNG of exactly the size asked, the same bytes each time it is drawn', () => {
    const png = benchPng(MB);
    assert.equal(png.length, MB);
    assert.equal(inlineImageType(png.subarray(0, 12)), 'image/png');
    const all = chunks(png);
    assert.deepEqual(
      all.map((c) => c.type),
      ['IHDR', 'IDAT', 'tEXt', 'IEND'],
    );
    const ihdr = all[0]?.data as Buffer;
    const [width, height] = [ihdr.readUInt32BE(0), ihdr.readUInt32BE(4)];
    assert.equal(inflateSync(all[1]?.data as Buffer).length, height * (1 + 3 * width));
    assert.ok(benchPng(MB).equals(png));
  });

  describe('served by ours and by the reference', () => {
    let dir: string;
    let refDir: string;
    let seeded: Seeded;
    let token: string;
    let ours: AppServer;
    let ref: Child;

    before(async () => {
      dir = await tempDir('file-row');
      refDir = await tempDir('file-row-ref');
      const creds = await makeCredentials(dir);
      token = creds.token;
      seeded = await seedPastes(dir, creds.userId, 3, { imageBytes: MB });
      await writeFile(join(refDir, 'manifest.json'), JSON.stringify(seeded));
      ours = await startServer({ dataDir: dir });
      ref = await spawnServer('reference', refServerArgv(), {
        REF_MANIFEST: join(refDir, 'manifest.json'),
        REF_DIR: refDir,
        REF_WORK: 'headers',
      });
    });

    after(async () => {
      await ref?.stop();
      await ours?.stop();
      await Promise.all([removeTempDir(dir), removeTempDir(refDir)]);
    });

    test('the same bytes, inline as image/png, and with REF_WORK=headers the headers ours sends', async () => {
      const image = seeded.image as NonNullable<Seeded['image']>;
      const paths = [`/api/v1/file.php?hash=${image.hash}&name=${image.name}`, `/p/${image.hash}/files/${image.name}`];
      for (const path of paths) {
        const mine = await req(ours, 'GET', path, { token });
        const theirs = await req({ port: ref.port }, 'GET', path, { token });
        assert.equal(mine.status, 200, path);
        assert.equal(theirs.status, 200, path);
        assert.equal(createHash('sha256').update(mine.body).digest('hex'), image.sha256);
        assert.ok(theirs.body.equals(mine.body), path);
        const names = (h: Record<string, unknown>): string[] =>
          Object.keys(h)
            .filter((n) => !['date', 'connection', 'keep-alive'].includes(n))
            .sort();
        assert.deepEqual(names(theirs.headers), names(mine.headers), path);
        for (const n of names(mine.headers).filter((n) => n !== 'x-request-id'))
          assert.equal(theirs.headers[n], mine.headers[n], `${path}: ${n}`);
      }
    });
  });
});
