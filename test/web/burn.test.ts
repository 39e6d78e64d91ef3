import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { makeToken, req, startServer, type TestServer } from '../helpers/server.ts';
import { createViaForm, register, WebClient } from '../helpers/web-client.ts';

let s: TestServer;
let owner: WebClient;

before(async () => {
  s = await startServer();
  owner = new WebClient(s);
  await register(owner, 'owner');
});

describe('burn after read on the web', () => {
  test('GET (and HEAD, and the short link) only shows the warning page; nothing burns', async () => {
    const hash = await createViaForm(owner, {
      title: 'Launch codes',
      content: 'top-secret-0000',
      burn_after_read: '1',
    });
    const visitor = new WebClient(s);
    for (let i = 0; i < 3; i++) {
      const r = await visitor.get(`/p/${hash}`);
      assert.equal(r.status, 200);
      assert.match(r.text, /<title>Burn After Read paste<\/title>/);
      assert.match(r.text, /<h1>Burn After Read paste<\/h1>/);
      assert.doesNotMatch(r.text, /top-secret-0000|Launch codes/);
      assert.match(r.text, /<form method="post" action="\/p\/[A-Za-z0-9]{10}">/);
    }
    assert.equal((await visitor.request('HEAD', `/p/${hash}`)).status, 200);
    assert.equal((await visitor.get(`/s/${hash.slice(0, 6)}`)).status, 302);
    const raw = await visitor.get(`/p/${hash}/raw`);
    assert.equal(raw.status, 302, 'raw does not reveal a one-time paste either');
    assert.equal(raw.location, `/p/${hash}`);
    // The owner's warning page shows the short link's QR code; fetching it burns nothing.
    assert.ok((await owner.get(`/p/${hash}`)).text.includes(`<img src="/p/${hash}/qr.svg"`));
    assert.equal((await visitor.get(`/p/${hash}/qr.svg`)).status, 200);
    assert.equal((await visitor.get(`/p/${hash}`)).status, 200, 'still there');
  });

  test('an anonymous visitor confirms with a POST: shown once, then 410 "burned" everywhere', async () => {
    const hash = await createViaForm(owner, { content: 'only-once-1234', burn_after_read: '1' });
    const visitor = new WebClient(s);
    await visitor.get(`/p/${hash}`);
    const shown = await visitor.post(`/p/${hash}`, {});
    assert.equal(shown.status, 200);
    assert.match(shown.text, /only-once-1234/);
    assert.match(shown.text, /This paste is now burned/);
    assert.doesNotMatch(shown.text, /\/raw"/, 'no raw link to a paste that is gone');
    const again = await visitor.post(`/p/${hash}`, {});
    assert.equal(again.status, 410);
    assert.doesNotMatch(again.text, /only-once-1234/);
    const page = await visitor.get(`/p/${hash}`);
    assert.equal(page.status, 410);
    assert.match(page.text, /already burned/);
    assert.equal((await visitor.get(`/p/${hash}/qr.svg`)).status, 410, 'nor its QR code');
    const token = await makeToken(s.dataDir, { user: 'apiuser' });
    const api = await req(s, 'GET', `/api/v1/paste.php?hash=${hash}`, { token });
    assert.equal(api.status, 410);
    assert.match(api.json.error as string, /burned/);
  });

  test('of ten concurrent confirmations exactly one gets the content', async () => {
    const hash = await createViaForm(owner, { content: 'race-5678', burn_after_read: '1' });
    const visitor = new WebClient(s);
    await visitor.get(`/p/${hash}`);
    const results = await Promise.all(Array.from({ length: 10 }, () => visitor.post(`/p/${hash}`, {})));
    assert.equal(results.filter((r) => r.status === 200 && r.text.includes('race-5678')).length, 1);
    assert.equal(results.filter((r) => r.status === 410).length, 9);
  });

  test('the owner also only gets the warning on GET, plus the link to share', async () => {
    const hash = await createViaForm(owner, { content: 'mine-9999', burn_after_read: '1' });
    const r = await owner.get(`/p/${hash}`);
    assert.match(r.text, /You created this one-time paste/);
    assert.ok(r.text.includes(`${s.url}/s/${hash.slice(0, 6)}`));
    assert.doesNotMatch(r.text, /mine-9999/);
  });

  test('a one-time paste with a password asks for it on the warning page and burns only when it is right', async () => {
    const hash = await createViaForm(owner, { content: 'pw-and-burn', burn_after_read: '1', password: 'let-me-in' });
    const visitor = new WebClient(s);
    const warn = await visitor.get(`/p/${hash}`);
    assert.match(warn.text, /Burn After Read paste/);
    assert.match(warn.text, /type="password"/);
    assert.equal((await visitor.post(`/p/${hash}`, {})).status, 401);
    const wrong = await visitor.post(`/p/${hash}`, { password: 'nope' });
    assert.equal(wrong.status, 403);
    assert.match(wrong.text, /Burn After Read paste/);
    const right = await visitor.post(`/p/${hash}`, { password: 'let-me-in' });
    assert.match(right.text, /pw-and-burn/);
    assert.equal((await visitor.get(`/p/${hash}`)).status, 410);
  });
});
