import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, beforeEach, describe, test } from 'node:test';
import { DurableFiles } from '../../src/store/files.ts';
import { SessionStore } from '../../src/store/sessions.ts';
import { cleanup, tempDataDir } from '../helpers/server.ts';

// What every backend does with sessions is test/contract/sessions.ts; here, what only the data folder has.
const IDLE = 60 * 60_000;
let dir: string;
let now: number;
let files: DurableFiles;
const dirs: string[] = [];

const open = async (): Promise<SessionStore> => {
  const s = new SessionStore(join(dir, 'sessions'), files, IDLE, () => now);
  await s.load();
  return s;
};

beforeEach(async () => {
  dir = await tempDataDir();
  dirs.push(dir);
  now = Date.UTC(2026, 0, 1);
  files = new DurableFiles(join(dir, 'tmp'));
  await files.init();
});
after(() => Promise.all(dirs.map(cleanup)));

describe('SessionStore', () => {
  test('an expired session leaves the memory too, not only the disk', async () => {
    const store = await open();
    const busy = await store.create(1);
    const idle = await store.create(2);
    for (let i = 0; i < 3; i++) {
      now += IDLE / 2;
      assert.notEqual(await store.get(busy.id), null);
    }
    assert.equal(await store.get(idle.id), null);
    assert.equal(store.size, 1);
  });

  test('load skips foreign and damaged files', async () => {
    const store = await open();
    const s = await store.create(1);
    const sessions = join(dir, 'sessions');
    await writeFile(join(sessions, 'README.txt'), 'hi');
    await writeFile(join(sessions, `${'a'.repeat(64)}.json`), '{not json');
    await writeFile(join(sessions, `${'b'.repeat(64)}.json`), JSON.stringify({ v: 1, user_id: 'x' }));
    await writeFile(join(sessions, `${'c'.repeat(64)}.json`), 'null');
    const again = await open();
    assert.equal(again.size, 1);
    assert.notEqual(await again.get(s.id), null);
  });
});
