import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startInstances } from '../helpers/instances.ts';
import { multipart } from '../helpers/multipart-body.ts';
import { req } from '../helpers/server.ts';

// Three instances on one database (README, Files: one-time pastes): a burned paste's file
// grant is spent in the database, so it is good once whichever instances are asked.
test("a one-time paste's file grant fetched through three instances at once is sent exactly once", async (t) => {
  const set = await startInstances(t);
  const owner = await set.token({ user: 'alice' });
  const reader = await set.token({ user: 'bob', scopes: 'read' });
  const bytes = Buffer.from(`granted ${Math.random()}`);
  const m = multipart({ content: 'once', burn_after_read: '1' }, [{ name: 'a.txt', bytes }]);
  const made = await req(set.at(0), 'POST', '/api/v1/paste_create.php', {
    token: owner,
    body: m.body,
    headers: { 'content-type': m.type },
  });
  assert.equal(made.status, 200, made.text);
  const read = await req(set.at(1), 'GET', `/api/v1/paste.php?hash=${made.json['hash'] as string}`, { token: reader });
  assert.equal(read.status, 200, read.text);
  const url = new URL((read.json['paste'] as { files: { url: string }[] }).files[0]?.url as string);
  const answers = await Promise.all(
    Array.from({ length: 12 }, (_, i) => req(set.at(i), 'GET', url.pathname + url.search, { token: reader })),
  );
  const statuses = answers.map((a) => a.status);
  assert.equal(statuses.filter((s) => s === 200).length, 1, statuses.join(' '));
  assert.equal(statuses.filter((s) => s === 403).length, 11, statuses.join(' '));
  assert.deepEqual(answers.find((a) => a.status === 200)?.body, bytes);
});
