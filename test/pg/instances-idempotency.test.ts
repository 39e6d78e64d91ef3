import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startInstances } from '../helpers/instances.ts';
import { type AppServer, req } from '../helpers/server.ts';
import { WebClient } from '../helpers/web-client.ts';

// An Idempotency-Key retry that lands on another instance gets the first answer
// (README, Running several instances), also while the first is still being carried out.

const create = (s: AppServer, token: string, key: string, content = 'exactly once') =>
  req(s, 'POST', '/api/v1/paste_create.php', { token, headers: { 'idempotency-key': key }, body: { content } });

/** The hashes of alice's pastes, as her "My pastes" page lists them. */
async function listed(set: { all: AppServer[]; cli(a: string[], stdin?: string): Promise<string> }): Promise<string[]> {
  const c = new WebClient(set.all[0] as AppServer);
  await c.get('/login');
  const r = await c.post('/login', { name: 'alice', password: 'password123', next: '/' });
  assert.equal(r.status, 303, r.text);
  return [
    ...new Set([...(await c.get('/my')).text.matchAll(/href="\/p\/([A-Za-z0-9]{10})"/g)].map((m) => m[1] as string)),
  ];
}

test('a retry on another instance, after the first answer or while it is under way, gets that answer and writes nothing', async (t) => {
  const set = await startInstances(t);
  await set.cli(['user', 'add', 'alice', '--password-stdin'], 'password123');
  const token = await set.token({ user: 'alice' });

  // After: a create on a, retried on b and c.
  const first = await create(set.at(0), token, 'key-after');
  assert.equal(first.status, 200, first.text);
  for (const s of set.all.slice(1)) {
    const again = await create(s, token, 'key-after');
    assert.equal(again.status, 200);
    assert.deepEqual(again.json, first.json);
  }
  // The same key for another request is refused on any instance.
  assert.equal((await create(set.at(2), token, 'key-after', 'something else')).status, 422);

  // During: ten rounds of one request sent to all three instances at the same moment.
  for (let round = 0; round < 10; round++) {
    const answers = await Promise.all(set.all.map((s) => create(s, token, `key-during-${round}`, `during ${round}`)));
    for (const a of answers) assert.equal(a.status, 200, a.text);
    assert.equal(
      new Set(answers.map((a) => a.json['hash'])).size,
      1,
      `round ${round}: ${answers.map((a) => a.text).join(' ')}`,
    );
  }
  assert.equal((await listed(set)).length, 11, 'one paste per key');

  // An edit sent to all three at once is carried out once: one new revision.
  const hash = first.json['hash'] as string;
  const edits = await Promise.all(
    set.all.map((s) =>
      req(s, 'POST', '/api/v1/paste_edit.php', {
        token,
        headers: { 'idempotency-key': 'edit-once' },
        body: { hash, content: 'edited once' },
      }),
    ),
  );
  for (const e of edits) assert.equal(e.status, 200, e.text);
  const read = await req(set.at(1), 'GET', `/api/v1/paste.php?hash=${hash}`, { token });
  assert.equal((read.json['paste'] as { revision?: number }).revision, 2);
});
