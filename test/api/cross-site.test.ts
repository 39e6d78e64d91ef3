import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { makeToken, req, startServer, type AppServer, type Res } from '../helpers/server.ts';
import { storedPasteCount } from '../helpers/stored.ts';
import { WebClient } from '../helpers/web-client.ts';

const EVIL = 'https://evil.example';
const FRIEND = 'https://friend.example';

let s: AppServer;
let ours: string;
let token: string;

before(async () => {
  s = await startServer({
    env: { ANONYMOUS_PASTES: '1', ANONYMOUS_RATE_PER_MINUTE: '3', CORS_ORIGINS: FRIEND },
  });
  ours = new URL(s.url).origin;
  token = await makeToken(s.dataDir, { user: 'alice' });
});

const create = (headers: Record<string, string>, from?: string): Promise<Res> =>
  req({ port: s.port, ...(from === undefined ? {} : { localAddress: from }) }, 'POST', '/api/v1/paste_create.php', {
    body: { content: 'from a page', expiry: '1h' },
    headers,
  });

describe('a create without a token from another site’s page', () => {
  test('is 403 cross_site for an Origin neither ours nor in CORS_ORIGINS, stores nothing and spends no budget', async () => {
    const before = await storedPasteCount(s.dataDir);
    for (const origin of [EVIL, 'null', `${ours}.evil.example`, ours.replace('http:', 'https:')]) {
      const r = await create({ origin }, '127.0.0.2');
      assert.equal(r.status, 403, `${origin}: ${r.text}`);
      assert.equal(r.json.code, 'cross_site');
      assert.match(r.json.error ?? '', /another site's page/);
    }
    assert.equal(await storedPasteCount(s.dataDir), before);
    // The refusals spent none of the client's ANONYMOUS_RATE_PER_MINUTE.
    for (let i = 0; i < 3; i++) assert.equal((await create({}, '127.0.0.2')).status, 200);
    assert.equal((await create({}, '127.0.0.2')).status, 429);
  });

  test('is 403 for Sec-Fetch-Site: cross-site without an Origin; same-origin, same-site and none are taken', async () => {
    const r = await create({ 'sec-fetch-site': 'cross-site' }, '127.0.0.3');
    assert.equal(r.status, 403, r.text);
    assert.equal(r.json.code, 'cross_site');
    for (const site of ['same-origin', 'same-site', 'none'])
      assert.equal((await create({ 'sec-fetch-site': site }, '127.0.0.3')).status, 200, site);
  });

  test('is taken from this site, from an origin CORS_ORIGINS lists, and from no page at all (curl, scripts)', async () => {
    assert.equal((await create({ origin: ours, 'sec-fetch-site': 'same-origin' }, '127.0.0.4')).status, 200);
    const friend = await create({ origin: FRIEND, 'sec-fetch-site': 'cross-site' }, '127.0.0.4');
    assert.equal(friend.status, 200, friend.text);
    assert.equal(friend.headers['access-control-allow-origin'], FRIEND);
    assert.equal((await create({}, '127.0.0.4')).status, 200);
  });

  test('with a token it is the token holder’s create, whatever page sent it', async () => {
    const r = await req(s, 'POST', '/api/v1/paste_create.php', {
      token,
      body: { content: 'mine' },
      headers: { origin: EVIL, 'sec-fetch-site': 'cross-site' },
    });
    assert.equal(r.status, 200, r.text);
  });

  test('a text/plain POST to paste_create.php or to hastebin’s /documents is refused the same way', async () => {
    const text = { 'content-type': 'text/plain', origin: EVIL };
    const api = await req({ port: s.port, localAddress: '127.0.0.5' }, 'POST', '/api/v1/paste_create.php?expiry=1h', {
      body: 'plain',
      headers: text,
    });
    assert.equal(api.status, 403, api.text);
    assert.equal(api.json.code, 'cross_site');
    const haste = await req({ port: s.port, localAddress: '127.0.0.5' }, 'POST', '/documents', {
      body: 'plain',
      headers: text,
    });
    assert.equal(haste.status, 403, haste.text);
    assert.match(String(haste.json['message']), /another site's page/);
    const own = await req({ port: s.port, localAddress: '127.0.0.5' }, 'POST', '/documents', {
      body: 'plain',
      headers: { 'content-type': 'text/plain', origin: ours },
    });
    assert.equal(own.status, 200, own.text);
  });

  test('with CORS_ORIGINS=* any page may create', async () => {
    const open = await startServer({ env: { ANONYMOUS_PASTES: '1', CORS_ORIGINS: '*' } });
    const r = await req(open, 'POST', '/api/v1/paste_create.php', {
      body: { content: 'x', expiry: '1h' },
      headers: { origin: EVIL, 'sec-fetch-site': 'cross-site' },
    });
    assert.equal(r.status, 200, r.text);
    const bare = await req(open, 'POST', '/api/v1/paste_create.php', {
      body: { content: 'x', expiry: '1h' },
      headers: { 'sec-fetch-site': 'cross-site' },
    });
    assert.equal(bare.status, 200, bare.text);
  });

  test('the web form refuses a visitor’s create from another site, by Origin or by Sec-Fetch-Site alone', async () => {
    const form = { language: 'auto', privacy: 'public', expiry: '1h', highlight: '1', content: 'web' };
    for (const headers of [{ origin: EVIL }, { 'sec-fetch-site': 'cross-site' }]) {
      const v = new WebClient({ port: s.port, localAddress: '127.0.0.6' });
      await v.get('/');
      const r = await v.request('POST', '/', { _csrf: v.csrf, ...form }, headers);
      assert.equal(r.status, 403, JSON.stringify(headers));
      assert.match(r.text, /sent from another site/);
    }
    const v = new WebClient({ port: s.port, localAddress: '127.0.0.6' });
    await v.get('/');
    const ok = await v.request(
      'POST',
      '/',
      { _csrf: v.csrf, ...form },
      { origin: ours, 'sec-fetch-site': 'same-origin' },
    );
    assert.equal(ok.status, 200, ok.text);
  });
});
