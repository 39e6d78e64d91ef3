import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';
import { BACKEND } from '../helpers/backend.ts';
import { cleanup, req, startServer, uploadUntilClosed, type Res, type TestServer } from '../helpers/server.ts';
import { database } from '../helpers/stored.ts';
import { createViaForm, register, WebClient } from '../helpers/web-client.ts';

let s: TestServer;
let user: WebClient;
let hash: string;

before(async () => {
  s = await startServer();
  user = new WebClient(s);
  await register(user, 'admin');
  hash = await createViaForm(user, { content: 'hello' });
});

function assertSecure(r: Res, what: string): void {
  const csp = String(r.headers['content-security-policy']);
  assert.match(csp, /default-src 'none'/, what);
  assert.match(csp, /script-src 'self'(;|$)/, what);
  assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/, what);
  assert.match(csp, /frame-ancestors 'none'/, what);
  assert.equal(r.headers['x-content-type-options'], 'nosniff', what);
  assert.equal(r.headers['referrer-policy'], 'same-origin', what);
  assert.equal(r.headers['x-frame-options'], 'DENY', what);
}

describe('security headers', () => {
  test('every page, error page and redirect carries them', async () => {
    const anon = new WebClient(s);
    const pages: [WebClient, string, number][] = [
      [anon, '/', 200],
      [anon, '/login', 200],
      [anon, '/register', 200],
      [anon, `/p/${hash}`, 200],
      [anon, '/p/AAAAAAAAAA', 404],
      [anon, '/nowhere', 404],
      [anon, '/my', 302],
      [anon, `/s/${hash.slice(0, 6)}`, 302],
      [user, '/my', 200],
      [user, '/api_keys.php', 200],
      [user, '/admin/tokens', 200],
      [user, '/admin/logs', 200],
      [user, `/p/${hash}/edit`, 200],
      [user, `/p/${hash}/raw`, 200],
    ];
    for (const [c, path, status] of pages) {
      const r = await c.get(path);
      assert.equal(r.status, status, path);
      assertSecure(r, path);
      if (r.status === 200 && path !== `/p/${hash}/raw`) {
        assert.match(String(r.headers['content-type']), /^text\/html; charset=utf-8/);
        assert.doesNotMatch(r.text, /<script>|\sstyle="|\son[a-z]+="/, `${path} has no inline script or style`);
      }
    }
  });

  test('a wrong method is 405 with Allow; HEAD is served like GET without a body', async () => {
    const r = await req(s, 'DELETE', '/');
    assert.equal(r.status, 405);
    assert.equal(r.headers['allow'], 'GET, POST, HEAD');
    assertSecure(r, 'DELETE /');
    const head = await req(s, 'HEAD', '/login');
    assert.equal(head.status, 200);
    assert.equal(head.text, '');
  });

  test('an unexpected fault is a generic 500 page; the detail goes only to the server log', async () => {
    const broken = 'QzQzQz0000';
    let r: Res;
    if (BACKEND === 'files') {
      // A folder where the paste's file should be: reading it fails with EISDIR, which nothing plans for.
      await mkdir(join(s.dataDir, 'pastes', 'Qz', 'QzQzQz.json'), { recursive: true });
      r = await req(s, 'GET', `/p/${broken}`);
    } else {
      // The pastes table gone for a moment: the read fails with 42P01, which nothing plans for.
      const sql = await database(s.dataDir);
      await sql`alter table pastes rename to pastes_away`;
      try {
        r = await req(s, 'GET', `/p/${broken}`);
      } finally {
        await sql`alter table pastes_away rename to pastes`;
      }
    }
    const detail = BACKEND === 'files' ? /EISDIR|illegal operation/ : /relation|does not exist|42P01/;
    assert.equal(r.status, 500);
    assert.match(r.text, /Something went wrong/);
    assert.doesNotMatch(r.text, detail);
    assertSecure(r, '500');
    assert.match(s.output(), BACKEND === 'files' ? /EISDIR/ : /relation "pastes" does not exist/);
  });

  test('pages read the query leniently: a malformed escape or a repeated name is no 400', async () => {
    for (const path of [
      '/?a=%zz',
      `/p/${hash}?a=%ZZ`,
      '/?x=1&x=2',
      `/p/${hash}/raw?%E0=1&b`,
      `/my?${'k=v&'.repeat(100)}`,
    ]) {
      const r = await user.get(path);
      assert.equal(r.status, 200, path);
    }
    // The last value of a repeated name wins; an undecodable pair is skipped.
    const login = await new WebClient(s).get('/login?next=/a&next=/my&next=%ZZ');
    assert.match(login.text, /name="next" value="\/my"/);
  });
});

describe('static assets', () => {
  test('the stylesheet and the script have their own types, nosniff and an ETag', async () => {
    const home = await req(s, 'GET', '/');
    const css = /href="(\/static\/app\.css\?v=[\w-]+)"/.exec(home.text)?.[1] ?? '';
    const js = /src="(\/static\/app\.js\?v=[\w-]+)"/.exec(home.text)?.[1] ?? '';
    const icon = /href="(\/static\/icon\.svg\?v=[\w-]+)"/.exec(home.text)?.[1] ?? '';
    for (const [path, type] of [
      [css, 'text/css'],
      [js, 'text/javascript'],
      [icon, 'image/svg+xml'],
    ] as const) {
      const r = await req(s, 'GET', path);
      assert.equal(r.status, 200, path);
      assert.ok(String(r.headers['content-type']).startsWith(type), path);
      assert.equal(r.headers['x-content-type-options'], 'nosniff');
      assert.equal(r.headers['cache-control'], 'public, max-age=31536000, immutable');
      const etag = String(r.headers['etag']);
      assert.equal((await req(s, 'GET', path, { headers: { 'if-none-match': etag } })).status, 304);
    }
    const stale = await req(s, 'GET', '/static/app.css?v=old');
    assert.equal(stale.headers['cache-control'], 'no-cache');
    assert.match(stale.text, /prefers-color-scheme: dark/);
    assert.equal((await req(s, 'HEAD', '/static/app.js')).text, '');
    assert.equal((await req(s, 'POST', '/static/app.js')).status, 405);
    assert.equal((await req(s, 'GET', '/static/nope.css')).status, 404);
  });

  test('the script wires copy buttons and nothing else', async () => {
    const js = (await req(s, 'GET', '/static/app.js')).text;
    assert.match(js, /data-copy/);
    assert.doesNotMatch(js, /eval\(|innerHTML|fetch\(/);
  });
});

describe('refused web bodies', () => {
  test('a form POST answered before its body arrives closes the connection instead of reading it', async () => {
    const s = await startServer();
    try {
      const declared = 50_000_000;
      const result = await uploadUntilClosed(
        s.port,
        `POST /login HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${declared}\r\n\r\n`,
        declared,
      );
      assert.match(result.head, /^HTTP\/1\.1 4\d\d /);
      assert.match(result.head, /\r\nconnection: close\r\n/i);
      assert.ok(result.sent < declared, `sent ${result.sent} bytes`);
    } finally {
      await s.stop();
      await cleanup(s.dataDir);
    }
  });
});
