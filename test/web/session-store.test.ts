import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, beforeEach, describe, test } from 'node:test';
import { DurableFiles } from '../../src/store/files.ts';
import { SESSION_TOUCH_MS } from '../../src/auth/sessions.ts';
import { SessionStore } from '../../src/store/sessions.ts';
import { cleanup, tempDataDir } from '../helpers/server.ts';

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
const key = (id: string): string => createHash('sha256').update(id).digest('hex');

beforeEach(async () => {
  dir = await tempDataDir();
  dirs.push(dir);
  now = Date.UTC(2026, 0, 1);
  files = new DurableFiles(join(dir, 'tmp'));
  await files.init();
});
after(() => Promise.all(dirs.map(cleanup)));

describe('SessionStore', () => {
  test('creates a random 43-character id and stores only its SHA-256', async () => {
    const store = await open();
    const a = await store.create(7);
    const b = await store.create(7);
    assert.match(a.id, /^[A-Za-z0-9_-]{43}$/);
    assert.notEqual(a.id, b.id);
    assert.notEqual(a.record.csrf, b.record.csrf);
    const names = await readdir(join(dir, 'sessions'));
    assert.deepEqual(names.sort(), [`${key(a.id)}.json`, `${key(b.id)}.json`].sort());
    const text = await readFile(join(dir, 'sessions', `${key(a.id)}.json`), 'utf8');
    assert.ok(!text.includes(a.id));
    assert.equal(JSON.parse(text).user_id, 7);
  });

  test('finds a live session and survives a reload', async () => {
    const s = await (await open()).create(3);
    const again = await open();
    const found = await again.get(s.id);
    assert.equal(found?.session.record.user_id, 3);
    assert.equal(found?.touched, false);
    assert.equal(await again.get('not-a-session-id'), null);
    assert.equal(await again.get('A'.repeat(43)), null);
  });

  test('refreshes last_seen on disk at most every few minutes, and says so', async () => {
    const store = await open();
    const s = await store.create(1);
    const file = join(dir, 'sessions', `${key(s.id)}.json`);
    now += SESSION_TOUCH_MS - 1;
    assert.equal((await store.get(s.id))?.touched, false);
    assert.equal(JSON.parse(await readFile(file, 'utf8')).last_seen, Date.UTC(2026, 0, 1));
    now += 1;
    assert.equal((await store.get(s.id))?.touched, true);
    assert.equal(JSON.parse(await readFile(file, 'utf8')).last_seen, now);
  });

  test('expires a session idle for the limit, deleting its file; use keeps it alive', async () => {
    const store = await open();
    const busy = await store.create(1);
    const idle = await store.create(2);
    for (let i = 0; i < 3; i++) {
      now += IDLE / 2;
      assert.notEqual(await store.get(busy.id), null);
    }
    assert.equal(await store.get(idle.id), null);
    assert.ok(!(await readdir(join(dir, 'sessions'))).includes(`${key(idle.id)}.json`));
    assert.equal(store.size, 1);
  });

  test('an expiry is judged by the stored last use, also after a restart', async () => {
    const s = await (await open()).create(1);
    now += IDLE;
    assert.equal(await (await open()).get(s.id), null);
  });

  test('sweep removes every idle session and only those', async () => {
    const store = await open();
    const old = await store.create(1);
    now += IDLE - 1000;
    const fresh = await store.create(2);
    now += 1000;
    assert.equal(await store.sweep(), 1);
    assert.equal(await store.get(old.id), null);
    assert.notEqual(await store.get(fresh.id), null);
  });

  test('destroy forgets a session at once; a refresh cannot bring it back', async () => {
    const store = await open();
    const s = await store.create(1);
    now += SESSION_TOUCH_MS;
    const [got] = await Promise.all([store.get(s.id), store.destroy(s.id)]);
    assert.ok(got === null || got.session.id === s.id);
    assert.equal(await store.get(s.id), null);
    assert.deepEqual(await readdir(join(dir, 'sessions')), []);
    await store.destroy('malformed');
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
