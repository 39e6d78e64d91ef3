import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { makeToken, req, startServer, type AppServer } from '../../helpers/server.ts';
import { storedIdempotencyRecords, storedPasteCount } from '../../helpers/stored.ts';

const create = (
  server: AppServer,
  token: string,
  key: string | undefined,
  content: string,
  extra: Record<string, string> = {},
) =>
  req(server, 'POST', '/api/v1/paste_create.php', {
    token,
    body: { content },
    headers: { ...(key === undefined ? {} : { 'idempotency-key': key }), ...extra },
  });

describe('Idempotency-Key on create', () => {
  test('the same key and request answer the first answer, and make one paste', async () => {
    const server = await startServer();
    const token = await makeToken(server.dataDir);
    const first = await create(server, token, 'k-1', 'once');
    const again = await create(server, token, 'k-1', 'once');
    assert.equal(first.status, 200);
    assert.equal(again.status, 200);
    assert.equal(again.text, first.text);
    assert.equal(await storedPasteCount(server.dataDir), 1);
    // Asked for as text, the repeat is the same paste's URL.
    const text = await create(server, token, 'k-1', 'once', { accept: 'text/plain' });
    assert.equal(text.text, `${String(first.json['url'])}\n`);
    // Without a key, or with another one, each request is its own paste.
    await create(server, token, undefined, 'once');
    await create(server, token, 'k-2', 'once');
    assert.equal(await storedPasteCount(server.dataDir), 3);
  });

  test('the same key for another request is 422; another token has keys of its own', async () => {
    const server = await startServer();
    const token = await makeToken(server.dataDir);
    const other = await makeToken(server.dataDir, { user: 'bob' });
    const first = await create(server, token, 'shared', 'one');
    const changed = await create(server, token, 'shared', 'two');
    assert.equal(changed.status, 422);
    assert.equal(changed.json['code'], 'idempotency_key_reused');
    const theirs = await create(server, other, 'shared', 'two');
    assert.equal(theirs.status, 200);
    assert.notEqual(theirs.json['hash'], first.json['hash']);
  });

  test('a refused request records nothing: the key then works for the corrected one', async () => {
    const server = await startServer();
    const token = await makeToken(server.dataDir);
    assert.equal((await create(server, token, 'fix-me', '')).status, 400);
    assert.equal((await create(server, token, 'fix-me', 'now with content')).status, 200);
  });

  test('ten at once with one key: one paste, ten identical answers', async () => {
    const server = await startServer();
    const token = await makeToken(server.dataDir);
    const answers = await Promise.all(Array.from({ length: 10 }, () => create(server, token, 'burst', 'same')));
    assert.deepEqual(new Set(answers.map((a) => a.status)), new Set([200]));
    assert.equal(new Set(answers.map((a) => a.text)).size, 1);
    assert.equal(await storedPasteCount(server.dataDir), 1);
    const mixed = await Promise.all([create(server, token, 'burst-2', 'a'), create(server, token, 'burst-2', 'b')]);
    assert.deepEqual(mixed.map((a) => a.status).sort(), [200, 422]);
  });

  test('keys survive a restart, and are forgotten after 24 hours (and swept from storage)', async () => {
    const server = await startServer();
    const token = await makeToken(server.dataDir);
    const first = await create(server, token, 'durable', 'kept');
    await server.stop();
    const again = await startServer({ dataDir: server.dataDir });
    // The same paste (the address differs only by the new server's port).
    assert.equal((await create(again, token, 'durable', 'kept')).json['hash'], first.json['hash']);
    assert.equal(await storedIdempotencyRecords(again.dataDir), 1);
    again.clock.advance(24 * 3_600_000 + 1_000);
    await again.upkeep();
    assert.equal(await storedIdempotencyRecords(again.dataDir), 0);
    const later = await create(again, token, 'durable', 'kept');
    assert.equal(later.status, 200);
    assert.notEqual(later.json['hash'], first.json['hash']);
  });

  test('a malformed key is 400', async () => {
    const server = await startServer();
    const token = await makeToken(server.dataDir);
    for (const key of ['', 'x'.repeat(256), 'with space', 'caf\u00e9']) {
      const r = await req(server, 'POST', '/api/v1/paste_create.php', {
        token,
        body: { content: 'x' },
        headers: { 'idempotency-key': Buffer.from(key, 'utf8').toString('latin1') },
      });
      assert.equal(r.status, 400, JSON.stringify(key));
      assert.match(String(r.json.error), /Idempotency-Key/);
    }
  });
});

describe('Idempotency-Key on edit', () => {
  test('a repeated edit answers as the first and changes nothing more; another edit under the key is 422', async () => {
    const server = await startServer();
    const token = await makeToken(server.dataDir);
    const hash = String((await create(server, token, undefined, 'v1')).json['hash']);
    const edit = (content: string) =>
      req(server, 'POST', '/api/v1/paste_edit.php', {
        token,
        body: { hash, content },
        headers: { 'idempotency-key': 'edit-1' },
      });
    const first = await edit('v2');
    assert.equal(first.status, 200);
    // Someone else changes it; the retried edit must not undo that.
    await req(server, 'POST', '/api/v1/paste_edit.php', { token, body: { hash, content: 'v3' } });
    const retry = await edit('v2');
    assert.equal(retry.text, first.text);
    assert.equal((await req(server, 'GET', `/api/v1/raw.php?hash=${hash}`, { token })).text, 'v3');
    assert.equal((await edit('v4')).status, 422);
  });
});

describe('a refused write under a key', () => {
  test('records nothing: its retry is refused again, however the paste moved meanwhile', async () => {
    const server = await startServer();
    const token = await makeToken(server.dataDir);
    const bob = await makeToken(server.dataDir, { user: 'bob' });
    const hash = String((await create(server, token, undefined, 'v1')).json['hash']);
    const edit = (who: string, key: string, content: string, headers: Record<string, string> = {}) =>
      req(server, 'POST', '/api/v1/paste_edit.php', {
        token: who,
        body: { hash, content },
        headers: { 'idempotency-key': key, ...headers },
      });
    assert.equal((await edit(bob, 'k1', 'bob was here')).status, 403);
    assert.equal((await edit(token, 'other', 'v2')).status, 200);
    assert.equal((await edit(bob, 'k1', 'bob was here')).status, 403, 'not taken for done by the revision moving on');
    assert.equal((await edit(token, 'k2', 'v3', { 'if-match': '"nope"' })).status, 412);
    assert.equal((await edit(token, 'other2', 'v4')).status, 200);
    assert.equal((await edit(token, 'k2', 'v3', { 'if-match': '"nope"' })).status, 412);
    assert.equal((await req(server, 'GET', `/api/v1/raw.php?hash=${hash}`, { token })).text, 'v4');
  });
});
