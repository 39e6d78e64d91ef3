import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type AppServer, req } from '../helpers/server.ts';
import { seenByAll, startInstances } from '../helpers/instances.ts';

// Three instances on one database (README, Running several instances): what one does to a
// paste, every other honours.

const read = (s: AppServer, token: string, hash: string, headers: Record<string, string> = {}) =>
  req(s, 'GET', `/api/v1/paste.php?hash=${hash}`, { token, headers });

test('a one-time paste read by 30 readers at once through three instances goes to exactly one; the rest get 410', async (t) => {
  const set = await startInstances(t);
  const owner = await set.token({ user: 'alice' });
  const reader = await set.token({ user: 'bob', scopes: 'read' });
  for (let round = 0; round < 4; round++) {
    const made = await req(set.at(round), 'POST', '/api/v1/paste_create.php', {
      token: owner,
      body: { content: `secret ${round}`, burn_after_read: 1 },
    });
    assert.equal(made.status, 200, made.text);
    const hash = made.json['hash'] as string;
    const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => read(set.at(i), reader, hash)));
    const statuses = answers.map((a) => a.status);
    assert.equal(statuses.filter((s) => s === 200).length, 1, `round ${round}: ${statuses.join(' ')}`);
    assert.equal(statuses.filter((s) => s === 410).length, 29, `round ${round}: ${statuses.join(' ')}`);
    const winner = answers.find((a) => a.status === 200);
    assert.equal((winner?.json['paste'] as { content?: string } | undefined)?.content, `secret ${round}`);
  }
});

test('an edit, a privacy change, a password change and a delete on one instance are honoured by the others within 1 s', async (t) => {
  const set = await startInstances(t);
  const [a, b, c] = set.all as [AppServer, AppServer, AppServer];
  const owner = await set.token({ user: 'alice' });
  const other = await set.token({ user: 'bob', scopes: 'read' });
  const made = await req(a, 'POST', '/api/v1/paste_create.php', { token: owner, body: { content: 'first' } });
  const hash = made.json['hash'] as string;
  // Every instance has read the paste as it is, so any copy it keeps is warm.
  for (const s of set.all) assert.equal((await read(s, other, hash)).status, 200);
  const times: Record<string, number> = {};

  const content = (r: Awaited<ReturnType<typeof read>>) =>
    (r.json['paste'] as { content?: string } | undefined)?.content;
  assert.equal(
    (await req(b, 'POST', '/api/v1/paste_edit.php', { token: owner, body: { hash, content: 'second' } })).status,
    200,
  );
  times['edit'] = await seenByAll(
    set.all,
    b,
    async (s) => content(await read(s, other, hash)) === 'second',
    'the edit',
  );

  await req(c, 'POST', '/api/v1/paste_edit.php', { token: owner, body: { hash, privacy: 'private' } });
  times['private'] = await seenByAll(set.all, c, async (s) => (await read(s, other, hash)).status === 404, 'private');

  await req(a, 'POST', '/api/v1/paste_edit.php', { token: owner, body: { hash, privacy: 'public', password: 'pw1' } });
  times['password set'] = await seenByAll(
    set.all,
    a,
    async (s) => (await read(s, other, hash)).status === 401,
    'password',
  );
  for (const s of set.all) assert.equal((await read(s, other, hash, { 'x-paste-password': 'pw1' })).status, 200);
  await req(b, 'POST', '/api/v1/paste_edit.php', { token: owner, body: { hash, password: 'pw2' } });
  times['password changed'] = await seenByAll(
    set.all,
    b,
    async (s) => (await read(s, other, hash, { 'x-paste-password': 'pw1' })).status === 403,
    'the new password',
  );
  await req(c, 'POST', '/api/v1/paste_edit.php', { token: owner, body: { hash, clear_password: 1 } });
  times['password cleared'] = await seenByAll(
    set.all,
    c,
    async (s) => (await read(s, other, hash)).status === 200,
    'no password',
  );

  await req(a, 'POST', '/api/v1/paste_delete.php', { token: owner, body: { hash } });
  times['delete'] = await seenByAll(set.all, a, async (s) => (await read(s, other, hash)).status === 404, 'the delete');
  t.diagnostic(
    `seen by every instance after (ms): ${JSON.stringify(times, (_, v) => (typeof v === 'number' ? Math.round(v) : v))}`,
  );
  for (const [what, ms] of Object.entries(times)) assert.ok(ms < 1_000, `${what}: ${ms} ms`);
});
