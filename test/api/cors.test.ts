import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { makeToken, req, startServer, type AppServer } from '../helpers/server.ts';
import { WebClient } from '../helpers/web-client.ts';

const APP = 'https://app.example';
const OTHER = 'https://evil.example';

let off: AppServer;
let on: AppServer;
let any: AppServer;
let token: string;

before(async () => {
  off = await startServer();
  on = await startServer({ env: { CORS_ORIGINS: `${APP}, http://localhost:3000` } });
  any = await startServer({ env: { CORS_ORIGINS: '*' } });
  token = await makeToken(on.dataDir, { user: 'alice' });
});

const preflight = (s: AppServer, origin: string, path = '/api/v1/paste_create.php') =>
  req(s, 'OPTIONS', path, {
    headers: {
      origin,
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'authorization, content-type',
    },
  });

describe('CORS off (the default)', () => {
  test('OPTIONS is 405 as for any other method, and answers carry no CORS header', async () => {
    const r = await preflight(off, APP);
    assert.equal(r.status, 405);
    assert.match(String(r.headers['allow']), /POST/);
    assert.equal(r.headers['access-control-allow-origin'], undefined);
    const get = await req(off, 'GET', '/api/v1/openapi.json', { headers: { origin: APP } });
    assert.equal(get.headers['access-control-allow-origin'], undefined);
    assert.equal(get.headers['vary'], undefined);
  });
});

describe('CORS_ORIGINS set', () => {
  test('a preflight from a listed origin answers 204 with the methods and headers a page may use', async () => {
    const r = await preflight(on, APP);
    assert.equal(r.status, 204);
    assert.equal(r.headers['access-control-allow-origin'], APP);
    assert.match(String(r.headers['access-control-allow-methods']), /\bPOST\b/);
    const allowed = String(r.headers['access-control-allow-headers']).toLowerCase().split(/,\s*/);
    for (const h of [
      'authorization',
      'content-type',
      'idempotency-key',
      'if-match',
      'if-none-match',
      'x-paste-password',
    ])
      assert.ok(allowed.includes(h), h);
    assert.equal(r.headers['access-control-allow-credentials'], undefined);
    assert.match(String(r.headers['vary']), /Origin/);
    // hastebin's paths too.
    assert.equal((await preflight(on, APP, '/documents')).headers['access-control-allow-origin'], APP);
  });

  test("a preflight from an unlisted origin gets no CORS header, so the browser refuses the page's request", async () => {
    const r = await preflight(on, OTHER);
    assert.equal(r.status, 204);
    assert.equal(r.headers['access-control-allow-origin'], undefined);
    assert.equal(r.headers['access-control-allow-headers'], undefined);
  });

  test('answers to a listed origin carry its name and expose ETag, X-Request-Id, Retry-After and the rate headers', async () => {
    const made = await req(on, 'POST', '/api/v1/paste_create.php', {
      token,
      body: { content: 'cross' },
      headers: { origin: 'http://localhost:3000' },
    });
    assert.equal(made.status, 200);
    assert.equal(made.headers['access-control-allow-origin'], 'http://localhost:3000');
    const exposed = String(made.headers['access-control-expose-headers']).toLowerCase().split(/,\s*/);
    for (const h of ['etag', 'x-request-id', 'retry-after', 'x-ratelimit-limit', 'x-ratelimit-remaining'])
      assert.ok(exposed.includes(h), h);
    assert.equal(made.headers['access-control-allow-credentials'], undefined);
    // Errors too: a page learns why it was refused.
    const refused = await req(on, 'GET', '/api/v1/paste.php?hash=AAAAAAAAAA', { headers: { origin: APP } });
    assert.equal(refused.status, 401);
    assert.equal(refused.headers['access-control-allow-origin'], APP);
    const other = await req(on, 'GET', '/api/v1/paste.php?hash=AAAAAAAAAA', { token, headers: { origin: OTHER } });
    assert.equal(other.headers['access-control-allow-origin'], undefined);
    assert.match(String(other.headers['vary']), /Origin/);
  });

  test('the web pages stay same-origin: no CORS header, OPTIONS still 405', async () => {
    const page = await new WebClient(on).get('/', { origin: APP });
    assert.equal(page.headers['access-control-allow-origin'], undefined);
    const options = await req(on, 'OPTIONS', '/', {
      headers: { origin: APP, 'access-control-request-method': 'POST' },
    });
    assert.equal(options.status, 405);
  });

  test('`*` allows any origin, still without credentials', async () => {
    const r = await preflight(any, OTHER);
    assert.equal(r.status, 204);
    assert.equal(r.headers['access-control-allow-origin'], '*');
    assert.equal(r.headers['access-control-allow-credentials'], undefined);
  });
});
