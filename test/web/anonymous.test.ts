import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { startServer, type AppServer } from '../helpers/server.ts';
import { registerAll, WebClient } from '../helpers/web-client.ts';

let off: AppServer;
let on: AppServer;

before(async () => {
  off = await startServer();
  on = await startServer({
    env: { ANONYMOUS_PASTES: '1', ANONYMOUS_RATE_PER_MINUTE: '3', ANONYMOUS_MAX_EXPIRY: '1d' },
  });
});

const form = { language: 'auto', privacy: 'public', highlight: '1' };

describe('the home page for visitors', () => {
  test('without ANONYMOUS_PASTES a visitor gets no form, and a post goes to the login page', async () => {
    const v = new WebClient(off);
    const home = await v.get('/');
    assert.doesNotMatch(home.text, /<form method="post" action="\/">/);
    assert.match(home.text, /Log in to create a paste/);
    await v.get('/login');
    const r = await v.post('/', { ...form, content: 'x', expiry: '1h' });
    assert.equal(r.status, 303);
    assert.match(r.location ?? '', /^\/login/);
  });

  test('with ANONYMOUS_PASTES a visitor gets the form, limited to public or unlisted and the longest expiry', async () => {
    const v = new WebClient(on);
    const home = await v.get('/');
    assert.match(home.text, /<form method="post" action="\/">/);
    assert.doesNotMatch(home.text, /value="private"/);
    assert.doesNotMatch(home.text, /value="never"|value="1w"/);
    assert.match(home.text, /<option value="1d" selected>/);
  });

  test('a visitor creates a paste, gets its delete link once, and sees it shown as by "anonymous"', async () => {
    const v = new WebClient(on);
    await v.get('/');
    const r = await v.post('/', { ...form, title: 'visitor paste', content: 'hello from nowhere', expiry: '1h' });
    assert.equal(r.status, 200, r.text);
    const link = /\/p\/([A-Za-z0-9]{10})\/delete\/([A-Za-z0-9]{32})/.exec(r.text);
    assert.ok(link !== null, 'the page shows the delete link');
    const page = await v.get(`/p/${link[1]}`);
    assert.equal(page.status, 200);
    assert.match(page.text, /anonymous/);
    assert.ok(!page.text.includes(link[2] as string), 'the key is shown only on the page after creating');

    // An admin sees it and deletes it as any other.
    const [admin] = await registerAll(on, 'admin');
    const del = await admin.get(`/p/${link[1]}/delete`);
    assert.equal(del.status, 200);
    assert.equal((await admin.post(`/p/${link[1]}/delete`, {})).status, 303);
    assert.equal((await v.get(`/p/${link[1]}`)).status, 404);
  });

  test('a visitor asking for more than the door allows gets the form back with the reason', async () => {
    const v = new WebClient(on);
    await v.get('/');
    const r = await v.post('/', { ...form, content: 'x', privacy: 'private', expiry: 'never' });
    assert.equal(r.status, 400);
    assert.match(r.text, /public or unlisted/);
    assert.match(r.text, /at most 1d/);
  });

  test("a visitor's creates spend ANONYMOUS_RATE_PER_MINUTE, then 429", async () => {
    const s = await startServer({ env: { ANONYMOUS_PASTES: '1', ANONYMOUS_RATE_PER_MINUTE: '1' } });
    const v = new WebClient(s);
    await v.get('/');
    assert.equal((await v.post('/', { ...form, content: 'one', expiry: '1h' })).status, 200);
    const second = await v.post('/', { ...form, content: 'two', expiry: '1h' });
    assert.equal(second.status, 429);
    assert.match(String(second.headers['retry-after']), /^\d+$/);
  });
});
