import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DurableFiles } from '../../src/store/files.ts';
import { RateLimiter } from '../../src/ratelimit/bucket.ts';
import { loadBuckets, saveBuckets } from '../../src/store/bucket-file.ts';

const T0 = Date.UTC(2024, 0, 1);

describe('bucket persistence', () => {
  let dir = '';
  let files: DurableFiles;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ratelimit-'));
    files = new DurableFiles(join(dir, 'tmp'));
    await files.init();
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('saveBuckets then loadBuckets restores the same buckets', async () => {
    const file = join(dir, 'state', 'ratelimit.json');
    const a = new RateLimiter(() => T0);
    a.consume('token:x', 2);
    a.consume('token:x', 2);
    a.consume('ip:10.0.0.1', 10);
    await saveBuckets(files, file, a);
    assert.deepEqual(JSON.parse(await readFile(file, 'utf8')), { ...a.snapshot() });

    const b = new RateLimiter(() => T0);
    b.restore(await loadBuckets(file));
    assert.deepEqual(b.snapshot(), a.snapshot());
    assert.equal(b.consume('token:x', 2).allowed, false);
  });

  it('saveBuckets replaces an earlier save', async () => {
    const file = join(dir, 'replace.json');
    const rl = new RateLimiter(() => T0);
    rl.consume('token:a', 1);
    await saveBuckets(files, file, rl);
    rl.restore({});
    await saveBuckets(files, file, rl);
    assert.deepEqual(await loadBuckets(file), {});
  });

  it('loadBuckets answers {} for a missing file', async () => {
    assert.deepEqual(await loadBuckets(join(dir, 'nope.json')), {});
  });

  it('loadBuckets answers {} for a corrupt or truncated file', async () => {
    for (const [i, text] of ['{"token:a": {"tokens": 1, "upd', '', '\u0000\u0001garbage'].entries()) {
      const file = join(dir, `corrupt-${i}.json`);
      await writeFile(file, text);
      assert.deepEqual(await loadBuckets(file), {});
    }
  });

  it('loadBuckets propagates other I/O errors', async () => {
    const folder = join(dir, 'a-folder.json');
    await mkdir(folder);
    await assert.rejects(loadBuckets(folder), { code: 'EISDIR' });
  });
});
