import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, beforeEach, describe, test } from 'node:test';
import { DurableFiles, STATE_CHUNK as SAVE_CHUNK } from '../../src/store/files.ts';
import { PasteStore } from '../../src/store/pastes.ts';
import { ViewCounter } from '../../src/store/views.ts';
import { cleanup, tempDataDir } from '../helpers/server.ts';

// What every backend's view counts do is in test/contract/view-counts.ts; these test the data folder's state file.
let dir: string;
const dirs: string[] = [];
let files: DurableFiles;
let store: PasteStore;

beforeEach(async () => {
  dir = await tempDataDir();
  dirs.push(dir);
  files = new DurableFiles(join(dir, 'tmp'));
  await files.init();
  store = new PasteStore(dir, files, 0);
  await store.init();
});
after(() => Promise.all(dirs.map(cleanup)));

const file = (): string => join(dir, 'views.json');
const counter = (): ViewCounter => new ViewCounter(store, files, file());
/** A made-up hash for paste `i` (the counter never looks at the pastes unless it drains). */
const hashOf = (i: number): string => `h${String(i).padStart(9, '0')}`;

describe('the saved view counts', () => {
  test('more counts than one chunk of a save come back whole after a load, those from an older file included', async () => {
    const n = 2 * SAVE_CHUNK + 17;
    // An older version's file: the views alone, with no count of the paste's file to go with them.
    await writeFile(file(), JSON.stringify({ [hashOf(0)]: 5, [hashOf(1)]: 2 }));
    const views = counter();
    await views.load();
    for (let i = 2; i < n; i++) for (let k = 0; k <= i % 3; k++) views.add(hashOf(i), i % 50);
    await views.save();
    assert.equal(JSON.parse(await readFile(file(), 'utf8')).v, 2, 'the format the version before reads too');

    const again = counter();
    await again.load();
    assert.equal(again.size, n);
    // Views beyond a file that counts `fileCount`: the older file's count all of it, whatever the file says.
    assert.equal(again.pending(hashOf(0), 1_000), 5);
    assert.equal(again.pending(hashOf(1), 0), 2);
    for (let i = 2; i < n; i++) {
      assert.equal(again.pending(hashOf(i), i % 50), (i % 3) + 1, `paste ${i}`);
      // A file that already took them in (a fold, then a crash before the next save) gets none twice.
      assert.equal(again.pending(hashOf(i), (i % 50) + (i % 3) + 1), 0, `paste ${i}, folded`);
    }
  });

  test('a count of nothing, or over an unknown base, is dropped at load; one over no base is kept', async () => {
    await writeFile(
      file(),
      JSON.stringify({
        v: 2,
        pending: { [hashOf(1)]: [7, 3], [hashOf(2)]: [null, 4], [hashOf(3)]: [1, 0], [hashOf(4)]: ['x', 2] },
      }),
    );
    const views = counter();
    await views.load();
    assert.equal(views.size, 2);
    assert.equal(views.pending(hashOf(1), 7), 3);
    assert.equal(views.pending(hashOf(1), 9), 1);
    assert.equal(views.pending(hashOf(2), 100), 4);
  });

  test('a save of many counts lets other work run between its chunks: a count made meanwhile is in it', async () => {
    const views = counter();
    for (let i = 0; i < 3 * SAVE_CHUNK; i++) views.add(hashOf(i), 0);
    // Written in one go, the counts would have been taken before this could run.
    setImmediate(() => views.add('late000000', 0));
    await views.save();
    const again = counter();
    await again.load();
    assert.equal(again.size, 3 * SAVE_CHUNK + 1);
    assert.equal(again.pending('late000000', 0), 1);
  });

  test('a count made, while a save runs, to a paste that save had already written is in the next save', async () => {
    const views = counter();
    for (let i = 0; i < 3 * SAVE_CHUNK; i++) views.add(hashOf(i), 0);
    // The first chunk is written before the save lets anything else run.
    setImmediate(() => views.add(hashOf(0), 0));
    await views.save();
    assert.equal(JSON.parse(await readFile(file(), 'utf8')).pending[hashOf(0)][1], 1, 'written before the second view');
    await views.save();
    const again = counter();
    await again.load();
    assert.equal(again.pending(hashOf(0), 0), 2);
  });

  test("a save asked for while another is writing (at shutdown, a tick's) ends after it, and the last one's counts stay", async () => {
    const views = counter();
    for (let i = 0; i < 3 * SAVE_CHUNK; i++) views.add(hashOf(i), 0);
    const first = views.save();
    // Nothing changed since the first began: this one has nothing of its own to write, but
    // must not answer before the first's file is on disk.
    await views.save();
    assert.equal(Object.keys(JSON.parse(await readFile(file(), 'utf8')).pending).length, 3 * SAVE_CHUNK);
    await first;
    // One made while a save is writing goes after it, so an older list never lands last.
    const third = views.save();
    views.add(hashOf(1), 0);
    await Promise.all([third, views.save()]);
    const again = counter();
    await again.load();
    assert.equal(again.pending(hashOf(1), 0), 2);
  });
});
