import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { DurableFiles } from '../../src/store/files.ts';
import { OwnerIndex } from '../../src/store/owner-index.ts';
import { cleanup, tempDataDir } from '../helpers/server.ts';

test('OwnerIndex group-commits concurrent appends without losing or interleaving a line', async () => {
  const dir = await tempDataDir();
  try {
    const files = new DurableFiles(join(dir, 'tmp'));
    await files.init();
    const index = new OwnerIndex(dir, files);
    await index.init();
    const hashes = Array.from({ length: 200 }, (_, i) => `h${String(i).padStart(9, '0')}`);
    await Promise.all(hashes.map((h) => index.add(7, h)));
    await Promise.all([index.remove(7, hashes[0] as string), index.add(8, 'other00000')]);
    const listed = await index.list(7);
    assert.equal(listed.length, 199);
    assert.deepEqual(new Set(listed), new Set(hashes.slice(1)));
    assert.deepEqual(await index.list(8), ['other00000']);
    assert.deepEqual(await index.list(9), []);
    const lines = (await readFile(join(dir, 'owners', '7.log'), 'utf8')).split('\n').filter(Boolean);
    assert.ok(lines.every((l) => /^[+-]h\d{9}$/.test(l)));
  } finally {
    await cleanup(dir);
  }
});

test('OwnerIndex reports a failed write to every waiter of the batch', async () => {
  const dir = await tempDataDir();
  try {
    const files = new DurableFiles(join(dir, 'tmp'));
    const index = new OwnerIndex(join(dir, 'missing', 'deeper'), files);
    await assert.rejects(Promise.all([index.add(1, 'a'), index.add(1, 'b')]), /ENOENT/);
  } finally {
    await cleanup(dir);
  }
});
