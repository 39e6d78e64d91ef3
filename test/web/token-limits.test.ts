import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { makeToken, req, startServer } from '../helpers/server.ts';
import { registerAll } from '../helpers/web-client.ts';

describe("a token's own limits, set by an admin", () => {
  test('a CI token that may only create unlisted pastes of at most 256 KiB: enforced with 403 and 413, shown on its rows', async () => {
    const server = await startServer({ env: { OPEN_REGISTRATION: '1' } });
    const [admin, alice] = await registerAll(server, 'root', 'alice');
    const token = await makeToken(server.dataDir, { user: 'alice' });
    const id = token.split('_')[1] ?? '';
    const create = (privacy: string | undefined, size: number) =>
      req(server, 'POST', '/api/v1/paste_create.php', {
        token,
        body: { content: 'x'.repeat(size), ...(privacy === undefined ? {} : { privacy }) },
      });
    assert.equal((await create(undefined, 10)).status, 200, 'no limits yet');

    await admin.get('/admin/tokens');
    const saved = await admin.post('/admin/tokens', {
      id,
      limits: '1',
      scope_read: '1',
      scope_write: '1',
      rate: '0',
      max_kib: '256',
      privacy_unlisted: '1',
      expires: 'keep',
    });
    assert.equal(saved.status, 303);
    const row = await admin.get('/admin/tokens');
    assert.match(row.text, new RegExp(`id="max-${id}" name="max_kib" min="1" max="65536" value="256"`));
    assert.match(row.text, new RegExp(`id="pv-${id}-unlisted" name="privacy_unlisted" value="1" checked`));
    assert.doesNotMatch(row.text, new RegExp(`id="pv-${id}-public" name="privacy_public" value="1" checked`));

    const publicOne = await create(undefined, 10);
    assert.equal(publicOne.status, 403);
    assert.match(String(publicOne.json.error), /may only make unlisted pastes/);
    assert.equal((await create('unlisted', 10)).status, 200);
    const big = await create('unlisted', 256 * 1024 + 1);
    assert.equal(big.status, 413);
    assert.match(String(big.json.error), /at most 262144 bytes/);
    assert.equal((await create('unlisted', 256 * 1024)).status, 200);
    // An edit may not move a paste out of the allowed privacies either.
    const hash = String((await create('unlisted', 5)).json['hash']);
    assert.equal(
      (await req(server, 'POST', '/api/v1/paste_edit.php', { token, body: { hash, privacy: 'public' } })).status,
      403,
    );

    assert.match((await alice.get('/api_keys.php')).text, /pastes up to 256 KiB · unlisted only/);

    // A form without the limits (an older page) leaves them as they are; the admin can also end the token.
    await admin.post('/admin/tokens', { id, scope_read: '1', scope_write: '1', rate: '5' });
    assert.equal((await create(undefined, 10)).status, 403, 'the limits stayed');
    await admin.post('/admin/tokens', {
      id,
      limits: '1',
      scope_read: '1',
      scope_write: '1',
      rate: '0',
      max_kib: '',
      privacy_public: '1',
      privacy_unlisted: '1',
      privacy_private: '1',
      expires: '7',
    });
    assert.equal((await create(undefined, 10)).status, 200, 'all privacies ticked: any');
    server.clock.advance(8 * 86_400_000);
    assert.equal((await create(undefined, 10)).json['code'], 'token_expired');
    const bad = await admin.post('/admin/tokens', {
      id,
      limits: '1',
      scope_read: '1',
      rate: '0',
      max_kib: 'lots',
      expires: 'keep',
    });
    assert.equal(bad.status, 400);
  });
});

describe('revoking from the admin area', () => {
  test('the row links a confirmation; confirmed, the token stops working at once', async () => {
    const server = await startServer({ env: { OPEN_REGISTRATION: '1' } });
    const [admin] = await registerAll(server, 'root', 'alice');
    const token = await makeToken(server.dataDir, { user: 'alice' });
    const id = token.split('_')[1] ?? '';
    const list = await admin.get('/admin/tokens');
    assert.match(list.text, new RegExp(`href="/admin/tokens\\?revoke=${id}#revoke">Revoke</a>`));
    const ask = await admin.get(`/admin/tokens?revoke=${id}`);
    assert.match(ask.text, new RegExp(`Revoke token ${id} of [^?]*alice[^?]*\\?</strong>`));
    assert.equal(
      (await req(server, 'GET', '/api/v1/paste.php?hash=AAAAAAAAAA', { token })).status,
      404,
      'still works until confirmed',
    );
    const done = await admin.post('/admin/tokens', { action: 'revoke', id });
    assert.equal(done.status, 303);
    assert.equal((await req(server, 'GET', '/api/v1/paste.php?hash=AAAAAAAAAA', { token })).status, 401);
    assert.match((await admin.get(done.location ?? '')).text, /The token was revoked/);
  });
});
