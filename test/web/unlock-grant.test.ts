import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { Signer } from '../../src/crypto/signature.ts';
import { hasUnlockGrant, UNLOCK_GRANT_MS, unlockCookie } from '../../src/web/unlock-grant.ts';
import { req, startServer, type TestServer } from '../helpers/server.ts';
import { createViaForm, register, WebClient } from '../helpers/web-client.ts';

const KEY = new Signer(Buffer.alloc(32, 3));
const NOW = Date.UTC(2026, 0, 1);
const P = { hash: 'AbCdEf1234', password: 'scrypt$salt$hash' };
const valueOf = (cookie: string): string => /^[^=]+=([^;]*)/.exec(cookie)?.[1] ?? '';

describe('unlock grants', () => {
  test('are a signed expiry, live for ten minutes, for one paste and its current password', () => {
    const cookie = unlockCookie(KEY, P, NOW, false);
    assert.match(
      cookie,
      /^paste_unlock_AbCdEf1234=\d+\.[A-Za-z0-9_-]{43}; Path=\/; Max-Age=600; HttpOnly; SameSite=Lax$/,
    );
    assert.match(
      unlockCookie(KEY, P, NOW, true),
      /^__Host-paste_unlock_AbCdEf1234=[^;]+; Path=\/; Max-Age=600; HttpOnly; Secure; SameSite=Lax$/,
    );
    const v = valueOf(cookie);
    assert.ok(!v.includes('scrypt'), 'nothing of the password is in it');
    assert.ok(hasUnlockGrant(KEY, P, v, NOW));
    assert.ok(hasUnlockGrant(KEY, P, v, NOW + UNLOCK_GRANT_MS - 1000));
    assert.ok(!hasUnlockGrant(KEY, P, v, NOW + UNLOCK_GRANT_MS), 'expired');
    assert.ok(!hasUnlockGrant(KEY, { ...P, hash: 'ZZZZZZZZZZ' }, v, NOW), 'another paste');
    assert.ok(!hasUnlockGrant(KEY, { ...P, password: 'scrypt$new$hash' }, v, NOW), 'the password changed');
    assert.ok(!hasUnlockGrant(new Signer(Buffer.alloc(32, 4)), P, v, NOW), 'another server key');
    const [exp = '', mac = ''] = v.split('.');
    assert.ok(!hasUnlockGrant(KEY, P, `${Number(exp) + 3600}.${mac}`, NOW), 'a stretched expiry');
    for (const junk of [undefined, '', 'x', `${exp}.`, `.${mac}`]) assert.ok(!hasUnlockGrant(KEY, P, junk, NOW));
  });
});

// One server for the tests below; each makes its own pastes.
let s: TestServer;
let alice: WebClient;
before(async () => {
  s = await startServer();
  alice = new WebClient(s);
  await register(alice, 'alice');
});

describe('an unlocked password paste', () => {
  let hash: string;
  before(async () => {
    hash = await createViaForm(alice, { title: 'Guarded', content: 'the treasure', password: 'open sesame' });
  });

  test('opens its Raw link without asking again, and the page holds no password', async () => {
    const v = new WebClient(s);
    await v.get(`/p/${hash}`);
    const page = await v.post(`/p/${hash}`, { password: 'open sesame' });
    assert.equal(page.status, 200);
    assert.ok(!page.text.includes('open sesame'), 'the password is not in the page');
    assert.match(page.text, new RegExp(`<a class="btn btn-sm" href="/p/${hash}/raw">Raw</a>`));
    assert.match(
      String(page.headers['set-cookie']),
      new RegExp(`paste_unlock_${hash}=[^;]+; Path=/; Max-Age=600; HttpOnly; SameSite=Lax`),
    );
    const raw = await v.get(`/p/${hash}/raw`);
    assert.equal(raw.status, 200);
    assert.equal(raw.text, 'the treasure');
    const again = await v.get(`/p/${hash}`);
    assert.equal(again.status, 200);
    assert.match(again.text, /the treasure/);
    assert.match(again.text, /<dt>Views<\/dt><dd>3<\/dd>/, 'grant reads still count as views');
  });

  test('unlocking raw grants the page as well', async () => {
    const v = new WebClient(s);
    await v.get(`/p/${hash}/raw`);
    assert.equal((await v.post(`/p/${hash}/raw`, { password: 'open sesame' })).text, 'the treasure');
    assert.equal((await v.get(`/p/${hash}`)).status, 200);
  });

  test('a wrong password, a stranger, or a forged grant get the password form', async () => {
    const v = new WebClient(s);
    await v.get(`/p/${hash}`);
    const wrong = await v.post(`/p/${hash}`, { password: 'nope' });
    assert.equal(wrong.status, 403);
    assert.doesNotMatch(String(wrong.headers['set-cookie']), /paste_unlock/);
    assert.equal((await v.get(`/p/${hash}/raw`)).status, 401);
    const forger = new WebClient(s);
    forger.cookies.set(`paste_unlock_${hash}`, `${Math.floor(Date.now() / 1000) + 600}.${'A'.repeat(43)}`);
    assert.equal((await forger.get(`/p/${hash}/raw`)).status, 401);
    assert.equal((await forger.get(`/p/${hash}`)).status, 401);
  });

  test('a grant for one paste opens no other, and ends when the password changes', async () => {
    const other = await createViaForm(alice, { content: 'other treasure', password: 'open sesame' });
    const v = new WebClient(s);
    await v.get(`/p/${hash}`);
    await v.post(`/p/${hash}`, { password: 'open sesame' });
    const grant = v.cookies.get(`paste_unlock_${hash}`) ?? '';
    v.cookies.set(`paste_unlock_${other}`, grant);
    assert.equal((await v.get(`/p/${other}/raw`)).status, 401);
    await alice.get(`/p/${hash}/edit`);
    const edited = await alice.post(`/p/${hash}/edit`, {
      title: 'Guarded',
      content: 'the treasure',
      language: 'text',
      privacy: 'public',
      expiry: 'keep',
      password: 'new secret',
    });
    assert.equal(edited.status, 303);
    assert.equal((await v.get(`/p/${hash}/raw`)).status, 401);
  });

  test('a grant opens nothing once the paste has been made private', async () => {
    const secret = await createViaForm(alice, { content: 'soon private', password: 'open sesame' });
    const v = new WebClient(s);
    await v.get(`/p/${secret}`);
    await v.post(`/p/${secret}`, { password: 'open sesame' });
    assert.equal((await v.get(`/p/${secret}/raw`)).text, 'soon private');
    await alice.get(`/p/${secret}/edit`);
    const edited = await alice.post(`/p/${secret}/edit`, {
      title: '',
      content: 'soon private',
      language: 'text',
      privacy: 'private',
      expiry: 'keep',
    });
    assert.equal(edited.status, 303);
    assert.equal((await v.get(`/p/${secret}/raw`)).status, 404);
    assert.equal((await v.get(`/p/${secret}`)).status, 404);
  });
});

describe('HEAD on a paste', () => {
  test('answers like GET without counting a view, on the page and on raw', async () => {
    const hash = await createViaForm(alice, { content: 'counted' });
    for (const path of [`/p/${hash}`, `/p/${hash}/raw`, `/p/${hash}`]) {
      const r = await req(s, 'HEAD', path);
      assert.equal(r.status, 200, path);
      assert.equal(r.text, '');
    }
    assert.match((await new WebClient(s).get(`/p/${hash}`)).text, /<dt>Views<\/dt><dd>1<\/dd>/);
  });

  test('with an unlock grant counts nothing either', async () => {
    const hash = await createViaForm(alice, { content: 'locked', password: 'pass-word' });
    const v = new WebClient(s);
    await v.get(`/p/${hash}`);
    await v.post(`/p/${hash}`, { password: 'pass-word' });
    assert.equal((await v.request('HEAD', `/p/${hash}/raw`)).status, 200);
    assert.equal((await v.request('HEAD', `/p/${hash}`)).status, 200);
    assert.match((await v.get(`/p/${hash}`)).text, /<dt>Views<\/dt><dd>2<\/dd>/);
  });
});
