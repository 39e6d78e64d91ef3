import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { makeToken, req, startServer, type TestServer } from '../../helpers/server.ts';
import { storedPaste } from '../../helpers/stored.ts';

let server: TestServer;
let alice: string;
let bob: string;
let admin: string;

before(async () => {
  server = await startServer();
  alice = await makeToken(server.dataDir, { user: 'alice' });
  bob = await makeToken(server.dataDir, { user: 'bob' });
  admin = await makeToken(server.dataDir, { user: 'root', admin: true, scopes: 'admin' });
});

async function create(body: Record<string, unknown>, token = alice): Promise<string> {
  const r = await req(server, 'POST', '/api/v1/paste_create.php', { token, body });
  assert.equal(r.status, 200, r.text);
  return r.json['hash'] as string;
}
async function get(hash: string, token = alice, query = ''): Promise<Record<string, unknown>> {
  const r = await req(server, 'GET', `/api/v1/paste.php?hash=${hash}${query}`, { token });
  assert.equal(r.status, 200, r.text);
  return r.json['paste'] as Record<string, unknown>;
}
const edit = (body: Record<string, unknown>, token = alice, form = false) =>
  req(server, 'POST', '/api/v1/paste_edit.php', { token, body, form });

describe('paste_edit.php', () => {
  test('changes only the fields sent; omitted ones keep their value', async () => {
    const hash = await create({ title: 'T', content: 'one', language: 'python', privacy: 'unlisted', expiry: '1d' });
    const before = await get(hash);
    const r = await edit({ hash, content: 'two' }, alice, true);
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.json, { ok: true, hash, url: `${server.url}/p/${hash}`, short_url: before['short_url'] });
    const after = await get(hash);
    assert.equal(after['content'], 'two');
    assert.equal(after['title'], 'T');
    assert.equal(after['language'], 'python');
    assert.equal(after['privacy'], 'unlisted');
    assert.equal(after['expire_at'], before['expire_at']);
  });

  test('an empty title clears it; language auto re-detects from the content', async () => {
    const hash = await create({ title: 'T', content: 'plain words here', language: 'text' });
    await edit({ hash, title: '', content: '<?php\necho "hi";\n$x = 1;\n', language: 'auto' });
    const p = await get(hash);
    assert.equal(p['title'], '');
    assert.equal(p['language'], 'php');
  });

  test('content may not be made empty', async () => {
    const hash = await create({ content: 'keep me' });
    assert.equal((await edit({ hash, content: '' })).status, 400);
    assert.equal((await get(hash))['content'], 'keep me');
  });

  test('expiry counts from the time of the edit, and never removes it', async () => {
    const hash = await create({ content: 'x', expiry: '10m' });
    await edit({ hash, expiry: '1w' });
    const p = await get(hash);
    const exp = Date.parse(`${p['expire_at'] as string}Z`.replace(' ', 'T'));
    assert.ok(Math.abs(exp - (Date.now() + 7 * 86_400_000)) < 5_000);
    await edit({ hash, expiry: 'never' });
    assert.equal((await get(hash))['expire_at'], null);
  });

  test('sets and clears a password', async () => {
    const hash = await create({ content: 'guarded' });
    await edit({ hash, password: 'correct horse' });
    assert.equal((await req(server, 'GET', `/api/v1/raw.php?hash=${hash}`, { token: bob })).status, 401);
    const ok = await req(server, 'GET', `/api/v1/raw.php?hash=${hash}`, {
      token: bob,
      headers: { 'x-paste-password': 'correct horse' },
    });
    assert.equal(ok.text, 'guarded');
    assert.equal((await edit({ hash, clear_password: 1 })).status, 200);
    assert.equal((await req(server, 'GET', `/api/v1/raw.php?hash=${hash}`, { token: bob })).status, 200);
  });

  test('an admin token may edit anyone’s paste', async () => {
    const hash = await create({ content: 'x', privacy: 'private' });
    assert.equal((await edit({ hash, content: 'by admin' }, admin)).status, 200);
    assert.equal((await get(hash))['content'], 'by admin');
  });

  test('editing a missing paste is 404', async () => {
    assert.equal((await edit({ hash: 'QQQQQQQQQQ', content: 'x' })).status, 404);
  });
});

describe('password-protected reads', () => {
  test('the owner and admin need no password; others give it as query or header', async () => {
    const hash = await create({ content: 'pw', password: 's3cret-pass' });
    assert.equal((await get(hash))['content'], 'pw');
    assert.equal((await get(hash, admin))['content'], 'pw');
    assert.equal((await get(hash, bob, '&password=s3cret-pass'))['content'], 'pw');
  });

  test('the password is stored hashed, never in clear', async () => {
    const hash = await create({ content: 'pw', password: 'plain-text-password' });
    const paste = await storedPaste(server.dataDir, hash);
    assert.ok(paste);
    const stored = JSON.stringify(paste);
    assert.doesNotMatch(stored, /plain-text-password/);
    assert.match(stored, /scrypt\$/);
  });
});

describe('burn after read', () => {
  test('the first read returns the content, later reads and edits answer 410 "burned"', async () => {
    const hash = await create({ content: 'once only', burn_after_read: 1 });
    const first = await req(server, 'GET', `/api/v1/paste.php?hash=${hash}`, { token: bob });
    assert.equal(first.status, 200);
    assert.equal((first.json['paste'] as Record<string, unknown>)['content'], 'once only');
    assert.equal((first.json['paste'] as Record<string, unknown>)['burn_after_read'], 1);
    for (const path of [`/api/v1/paste.php?hash=${hash}`, `/api/v1/raw.php?hash=${hash}`]) {
      const again = await req(server, 'GET', path, { token: alice });
      assert.equal(again.status, 410);
      assert.match(again.json.error as string, /burned/);
    }
    const e = await edit({ hash, content: 'revive' });
    assert.equal(e.status, 410);
    assert.match(e.json.error as string, /burned/);
  });

  test('of 20 concurrent readers exactly one gets the content', async () => {
    const hash = await create({ content: 'race me', burn_after_read: 1 });
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        req(server, 'GET', `/api/v1/${i % 2 ? 'raw' : 'paste'}.php?hash=${hash}`, { token: bob }),
      ),
    );
    const winners = results.filter((r) => r.status === 200);
    assert.equal(winners.length, 1);
    assert.ok(winners[0]?.text.includes('race me'));
    assert.ok(
      results.filter((r) => r.status !== 200).every((r) => r.status === 410 && /burned/.test(r.json.error as string)),
    );
  });

  test('the burned content is wiped from storage', async () => {
    const hash = await create({ content: 'wipe-this-marker', burn_after_read: 1 });
    await get(hash, bob);
    const stored = await storedPaste(server.dataDir, hash);
    assert.ok(stored, 'the tombstone stays');
    assert.doesNotMatch(JSON.stringify(stored), /wipe-this-marker/);
  });
});

describe('paste_delete.php', () => {
  test('deletes the paste and its short link, from storage', async () => {
    const hash = await create({ content: 'bye' });
    assert.notEqual(await storedPaste(server.dataDir, hash), null);
    const r = await req(server, 'POST', '/api/v1/paste_delete.php', { token: alice, body: { hash }, form: true });
    assert.deepEqual(r.json, { ok: true, deleted: true });
    assert.equal(await storedPaste(server.dataDir, hash), null);
    assert.equal((await req(server, 'GET', `/api/v1/paste.php?hash=${hash}`, { token: alice })).status, 404);
    assert.equal((await req(server, 'GET', `/s/${hash.slice(0, 6)}`)).status, 404);
    assert.equal((await req(server, 'POST', '/api/v1/paste_delete.php', { token: alice, body: { hash } })).status, 404);
  });

  test('deletes a burned paste too', async () => {
    const hash = await create({ content: 'x', burn_after_read: 1 });
    await get(hash, bob);
    const r = await req(server, 'POST', '/api/v1/paste_delete.php', { token: alice, body: { hash } });
    assert.equal(r.status, 200);
  });

  test('an admin token may delete anyone’s paste', async () => {
    const hash = await create({ content: 'x' }, bob);
    assert.equal((await req(server, 'POST', '/api/v1/paste_delete.php', { token: admin, body: { hash } })).status, 200);
  });
});

describe('short links', () => {
  test('GET /s/{code} redirects with 302 to /p/{hash}, without a token', async () => {
    const hash = await create({ content: 'short' });
    const r = await req(server, 'GET', `/s/${hash.slice(0, 6)}`);
    assert.equal(r.status, 302);
    assert.equal(r.headers['location'], `${server.url}/p/${hash}`);
  });

  test('/s/ of a private paste, or of nothing, is 404', async () => {
    const hash = await create({ content: 'x', privacy: 'private' });
    assert.equal((await req(server, 'GET', `/s/${hash.slice(0, 6)}`)).status, 404);
    assert.equal((await req(server, 'GET', '/s/zzzzzz')).status, 404);
    assert.equal((await req(server, 'GET', '/s/bad!')).status, 404);
  });
});
