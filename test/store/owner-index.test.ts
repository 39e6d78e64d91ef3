import assert from 'node:assert/strict';
import { appendFile, readFile, writeFile } from 'node:fs/promises';
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

test('OwnerIndex.count agrees with list, reads only what was appended since, and sees another writer', async () => {
  const dir = await tempDataDir();
  try {
    const files = new DurableFiles(join(dir, 'tmp'));
    await files.init();
    const index = new OwnerIndex(dir, files);
    await index.init();
    assert.equal(await index.count(3), 0, 'a user with no file owns nothing');
    for (const h of ['a000000000', 'b000000000', 'c000000000']) await index.add(3, h);
    await index.remove(3, 'b000000000');
    assert.equal(await index.count(3), (await index.list(3)).length);
    assert.equal(await index.count(3), 2);
    // Another process (the CLI) appends: the count follows, a half-written line not yet counted.
    await appendFile(join(dir, 'owners', '3.log'), '+d000000000\n-a000000000\n+e0000');
    assert.equal(await index.count(3), 2);
    await appendFile(join(dir, 'owners', '3.log'), '00000\n');
    assert.equal(await index.count(3), 3);
    assert.equal((await index.list(3)).length, 3);
    // A file written anew (a restore) is counted whole.
    await writeFile(join(dir, 'owners', '3.log'), '+z000000000\n');
    assert.equal(await index.count(3), 1);
  } finally {
    await cleanup(dir);
  }
});
