import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startInstances } from '../helpers/instances.ts';
import { sendFiles } from '../helpers/multipart.ts';
import { req } from '../helpers/server.ts';

// USER_QUOTA_BYTES holds across instances (README, Files): one user's creates and edits sent
// at once to three servers on one database, each within the quota alone, together past it.

const QUOTA = 100_000;
const SIZE = 30_000;
const FIT = Math.floor(QUOTA / SIZE);

test('one user uploading through three instances at once: exactly those that fit are made, the rest 413', async (t) => {
  const set = await startInstances(t, 3, { env: { MAX_FILE_BYTES: '65536', USER_QUOTA_BYTES: String(QUOTA) } });
  const token = await set.token({ user: 'alice' });
  const base = await req(set.at(0), 'POST', '/api/v1/paste_create.php', { token, body: { content: 'to edit' } });
  assert.equal(base.status, 200, base.text);
  const hash = base.json['hash'] as string;
  const answers = await Promise.all(
    Array.from({ length: 9 }, (_, i) => {
      const file = [{ name: `f${i}.bin`, bytes: Buffer.alloc(SIZE, `${i}:${Math.random()}`) }];
      // A third of them are edits of one paste, the rest creates, spread over the instances.
      return i % 3 === 0
        ? sendFiles(set.at(i), token, { hash }, file, '/api/v1/paste_edit.php')
        : sendFiles(set.at(i), token, { content: `create ${i}` }, file);
    }),
  );
  const made = answers.filter((a) => a.status === 200);
  for (const a of answers.filter((x) => x.status !== 200)) {
    assert.equal(a.status, 413, a.text);
    assert.equal(a.json['code'], 'quota_exceeded');
  }
  assert.equal(made.length, FIT, answers.map((a) => a.status).join(' '));
  let used = 0;
  for (const h of new Set([hash, ...made.map((a) => a.json['hash'] as string)])) {
    const r = await req(set.at(1), 'GET', `/api/v1/paste.php?hash=${h}`, { token });
    for (const f of (r.json['paste'] as { files: { size: number }[] }).files) used += f.size;
  }
  assert.equal(used, FIT * SIZE);
});
