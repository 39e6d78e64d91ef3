import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import hastebin from 'hastebin-gen';
import { storedPaste } from '../helpers/stored.ts';
import { makeToken, req, startServer, type AppServer } from '../helpers/server.ts';

let off: AppServer;
let on: AppServer;
let token: string;

before(async () => {
  off = await startServer();
  on = await startServer({ env: { ANONYMOUS_PASTES: '1', ANONYMOUS_MAX_BYTES: '1000' } });
  token = await makeToken(off.dataDir, { user: 'alice' });
});

const post = (s: AppServer, body: string, opts: { token?: string; headers?: Record<string, string> } = {}) =>
  req(s, 'POST', '/documents', { body, headers: { 'content-type': 'text/plain', ...opts.headers }, ...opts });

describe("hastebin's API with a token (anonymous pastes off)", () => {
  test('POST /documents answers {"key"}, and the key reads back through every hastebin path', async () => {
    const r = await post(off, 'echo hello\n', { token });
    assert.equal(r.status, 200, r.text);
    const key = r.json['key'] as string;
    assert.match(key, /^[A-Za-z0-9]{10}$/);
    assert.deepEqual(Object.keys(r.json), ['key']);
    const stored = await storedPaste(off.dataDir, key);
    assert.notEqual(stored?.['owner_id'], 0, "the token's user owns it");

    const doc = await req(off, 'GET', `/documents/${key}`);
    assert.equal(doc.status, 200);
    assert.deepEqual(doc.json, { key, data: 'echo hello\n' });
    assert.deepEqual((await req(off, 'GET', `/documents/${key}.sh`)).json, { key, data: 'echo hello\n' });
    const raw = await req(off, 'GET', `/raw/${key}.sh`);
    assert.equal(raw.status, 200);
    assert.equal(raw.text, 'echo hello\n');
    assert.match(String(raw.headers['content-type']), /^text\/plain/);
    for (const path of [`/${key}`, `/${key}.sh`]) {
      const page = await req(off, 'GET', path);
      assert.equal(page.status, 200, path);
      assert.match(page.text, /echo hello/);
    }
  });

  test("without a token, a create is refused in hastebin's shape while anonymous pastes are off", async () => {
    const r = await post(off, 'nobody');
    assert.equal(r.status, 401);
    assert.equal(typeof r.json['message'], 'string');
    assert.equal(r.json.ok, undefined);
  });

  test('the body is the text whatever its type: a form-encoded body is not decoded, a multipart one is 415', async () => {
    const text = 'a=b&c=%20d';
    const r = await post(off, text, { token, headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    assert.equal(r.status, 200, r.text);
    assert.equal((await req(off, 'GET', `/raw/${r.json['key']}`)).text, text);
    const multi = await post(off, '--x\r\n', { token, headers: { 'content-type': 'multipart/form-data; boundary=x' } });
    assert.equal(multi.status, 415);
    assert.equal(typeof multi.json['message'], 'string');
  });

  test("reads without a token see what the web page shows: a private paste is not found, unless the token is its owner's", async () => {
    const r = await req(off, 'POST', '/documents?privacy=private', {
      token,
      body: 'secret',
      headers: { 'content-type': 'text/plain' },
    });
    const key = r.json['key'] as string;
    const anon = await req(off, 'GET', `/documents/${key}`);
    assert.equal(anon.status, 404);
    assert.equal(typeof anon.json['message'], 'string');
    assert.equal((await req(off, 'GET', `/raw/${key}`)).status, 404);
    assert.equal((await req(off, 'GET', `/documents/${key}`, { token })).json['data'], 'secret');
    assert.equal((await req(off, 'GET', '/documents/nosuchkey1')).status, 404);
  });

  test('/<key> shadows no page: existing pages answer as before, and other paths still 404', async () => {
    assert.equal((await req(off, 'GET', '/login')).status, 200);
    assert.equal((await req(off, 'GET', '/register')).status, 200);
    assert.equal((await req(off, 'GET', '/api_keys.php')).status, 302);
    const missing = await req(off, 'GET', '/abcdefghij');
    assert.equal(missing.status, 404);
    assert.equal((await req(off, 'POST', '/abcdefghij')).status, 404, 'no method is taken from another route');
    assert.equal((await req(off, 'GET', '/abcdefghi')).status, 404);
    assert.equal((await req(off, 'GET', '/abcdefghij.x.y')).status, 404);
  });
});

describe("hastebin's API with anonymous pastes on", () => {
  test('a real hastebin client (hastebin-gen) uploads to the server and its link opens the paste', async () => {
    const link = await hastebin('console.log("from hastebin-gen")', { url: on.url, extension: 'js' });
    const m = new RegExp(`^${on.url}/([A-Za-z0-9]{10})\\.js$`).exec(link);
    assert.ok(m !== null, link);
    const key = m[1] as string;
    const page = await req(on, 'GET', `/${key}.js`);
    assert.equal(page.status, 200);
    assert.match(page.text, /from hastebin-gen/);
    assert.match(page.text, /anonymous/);
    assert.equal((await req(on, 'GET', `/raw/${key}`)).text, 'console.log("from hastebin-gen")');
    assert.equal((await storedPaste(on.dataDir, key))?.['owner_id'], 0);
  });

  test('an anonymous create gets its delete link and is held to the anonymous limits', async () => {
    const r = await post(on, 'short');
    assert.equal(r.status, 200);
    assert.match(r.json['delete_url'] as string, /\/delete\/[A-Za-z0-9]{32}$/);
    const big = await post(on, 'x'.repeat(1001));
    assert.equal(big.status, 413);
    assert.equal(typeof big.json['message'], 'string');
  });
});
