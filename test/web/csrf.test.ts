import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { req, startServer, type TestServer } from '../helpers/server.ts';
import { storedAccounts } from '../helpers/stored.ts';
import { createViaForm, registerAll, WebClient } from '../helpers/web-client.ts';

let s: TestServer;
let admin: WebClient;
let other: WebClient;
let hash: string;
let burnHash: string;
let pwHash: string;
let tokenId: string;

before(async () => {
  s = await startServer({ env: { OPEN_REGISTRATION: '1', AUTH_FAIL_LIMIT_PER_MINUTE: '1000' } });
  [admin, other] = await registerAll(s, 'admin', 'other');
  hash = await createViaForm(admin, { title: 'keep', content: 'unchanged' });
  burnHash = await createViaForm(admin, { content: 'still here', burn_after_read: '1' });
  pwHash = await createViaForm(admin, { content: 'locked', password: 'secret-pass' });
  await admin.get('/api_keys.php');
  const posted = await admin.post('/api_keys.php', { action: 'create', label: 'k', scope_read: '1', rate: '0' });
  // The secret is on the page the create redirects to.
  const created = await admin.get(posted.location ?? '');
  tokenId = /pst_([A-Za-z0-9]{8})_/.exec(created.text)?.[1] ?? '';
  assert.notEqual(tokenId, '');
});

const accountsText = async (): Promise<string> => JSON.stringify(await storedAccounts(s.dataDir));

/** Every state-changing form, with fields that would succeed given a valid token. */
const forms = (): [string, string, Record<string, string>][] => [
  ['create a paste', '/', { content: 'x', language: 'auto', privacy: 'public', expiry: 'never' }],
  ['create a token', '/api_keys.php', { action: 'create', label: 'evil', scope_read: '1', rate: '0' }],
  ['revoke a token', '/api_keys.php', { action: 'revoke', id: tokenId }],
  ['edit a token as admin', '/admin/tokens', { id: tokenId, scope_read: '1', scope_write: '1', rate: '5' }],
  [
    'edit a paste',
    `/p/${hash}/edit`,
    { title: 'pwned', content: 'pwned', language: 'text', privacy: 'public', expiry: 'keep' },
  ],
  ['delete a paste', `/p/${hash}/delete`, {}],
  ['burn a one-time paste', `/p/${burnHash}`, {}],
  ['unlock a password paste', `/p/${pwHash}`, { password: 'secret-pass' }],
  ['unlock a raw password paste', `/p/${pwHash}/raw`, { password: 'secret-pass' }],
  ['log out', '/logout', {}],
  ['log in', '/login', { name: 'admin', password: 'password123' }],
  ['register', '/register', { name: 'newbie', password: 'password123', confirm: 'password123' }],
];

describe('CSRF protection', () => {
  for (const [what, ,] of forms()) {
    test(`the form to ${what} is refused with 403 without a token, with a wrong one, or with another session's`, async () => {
      const [, path, fields] = forms().find((f) => f[0] === what) ?? ['', '', {}];
      const before = await accountsText();
      const cases: Record<string, string | undefined> = {
        missing: undefined,
        wrong: 'A'.repeat(43),
        foreign: other.csrf,
        empty: '',
      };
      for (const [name, token] of Object.entries(cases)) {
        const body = token === undefined ? fields : { ...fields, _csrf: token };
        const r = await admin.request('POST', path, body);
        assert.equal(r.status, 403, `${name} token: ${r.status}`);
        assert.match(r.text, /This form has expired or was sent from another site/);
      }
      assert.equal(await accountsText(), before, 'no account or token changed');
      assert.ok(admin.cookies.has('paste_sid'), 'still logged in');
      const p = await admin.get(`/p/${hash}`);
      assert.equal(p.status, 200);
      assert.match(p.text, /<h1 class="paste-title"><bdi>keep<\/bdi><\/h1>/);
      assert.equal((await admin.get(`/p/${burnHash}`)).status, 200, 'the one-time paste is not burned');
    });
  }

  test('an anonymous form needs the token of its own double-submit cookie', async () => {
    const visitor = new WebClient(s);
    const page = await visitor.get(`/p/${burnHash}`);
    assert.match(String(page.headers['set-cookie']), /^paste_csrf=/);
    const stranger = new WebClient(s);
    await stranger.get('/login');
    // The stranger's own valid token does not match the visitor's cookie.
    assert.equal((await visitor.request('POST', `/p/${burnHash}`, { _csrf: stranger.csrf })).status, 403);
    // A token without any cookie at all is refused as well.
    assert.equal((await req(s, 'POST', `/p/${burnHash}`, { body: { _csrf: visitor.csrf }, form: true })).status, 403);
    assert.equal((await visitor.get(`/p/${burnHash}`)).status, 200, 'still unburned');
  });

  test('an anonymous cookie-and-field pair of the attacker’s own making is refused', async () => {
    const visitor = new WebClient(s);
    await visitor.get(`/p/${burnHash}`);
    const issued = visitor.cookies.get('paste_csrf') ?? '';
    const [, mac = ''] = issued.split('.');
    const forgeries = ['A'.repeat(43), `${'A'.repeat(43)}.${'B'.repeat(43)}`, `${'A'.repeat(43)}.${mac}`];
    for (const forged of forgeries) {
      const planted = new WebClient(s);
      planted.cookies.set('paste_csrf', forged);
      const r = await planted.request('POST', `/p/${burnHash}`, { _csrf: forged });
      assert.equal(r.status, 403, forged);
      // A page with a form replaces the planted value with a signed one.
      const page = await planted.get('/login');
      assert.notEqual(planted.cookies.get('paste_csrf'), forged);
      assert.equal(page.csrf, planted.cookies.get('paste_csrf'));
    }
    assert.equal((await visitor.get(`/p/${burnHash}`)).status, 200, 'still unburned');
  });

  test('a POST from another origin is refused even with valid tokens; a missing Origin is allowed', async () => {
    const visitor = new WebClient(s);
    await visitor.get('/login');
    const fields = { _csrf: visitor.csrf, name: 'nobody', password: 'password123' };
    for (const origin of [
      'https://evil.example',
      'null',
      `${s.url}.evil.example`,
      `http://127.0.0.1:${s.port + 1}`,
      s.url.replace('http:', 'https:'),
    ]) {
      const r = await visitor.request('POST', '/login', fields, { origin });
      assert.equal(r.status, 403, origin);
      assert.match(r.text, /sent from another site/);
      assert.ok(r.text.includes(`Use this service at ${s.url}`), 'names the address to use');
    }
    await admin.get('/');
    const before = await accountsText();
    const evil = await admin.request(
      'POST',
      '/api_keys.php',
      { _csrf: admin.csrf, action: 'create', label: 'evil', scope_read: '1', rate: '0' },
      { origin: 'https://evil.example' },
    );
    assert.equal(evil.status, 403);
    assert.equal(await accountsText(), before, 'no token was created');
    assert.equal(
      (await visitor.request('POST', '/login', fields, { origin: s.url })).status,
      401,
      'our own origin passes',
    );
    assert.equal((await visitor.request('POST', '/login', fields)).status, 401, 'no Origin passes');
  });

  test('with BASE_URL unset, a sign-in posted from any loopback spelling of the port (the logged address) succeeds', async () => {
    for (const host of ['127.0.0.1', '[::1]', 'localhost']) {
      const visitor = new WebClient(s);
      await visitor.get('/login');
      const r = await visitor.request(
        'POST',
        '/login',
        { _csrf: visitor.csrf, name: 'admin', password: 'password123', next: '/' },
        { origin: `http://${host}:${s.port}` },
      );
      assert.equal(r.status, 303, `${host}: ${r.text}`);
      assert.ok(visitor.cookies.has('paste_sid'), `${host}: signed in`);
    }
  });

  test('with BASE_URL set, only its origin is this site: another loopback spelling of it is refused', async () => {
    const set = await startServer({ env: { BASE_URL: 'http://localhost:8080' } });
    const visitor = new WebClient(set);
    await visitor.get('/login');
    const fields = { _csrf: visitor.csrf, name: 'nobody', password: 'password123' };
    for (const origin of ['http://127.0.0.1:8080', 'http://[::1]:8080', `http://localhost:${set.port}`]) {
      const r = await visitor.request('POST', '/login', fields, { origin });
      assert.equal(r.status, 403, origin);
      assert.ok(r.text.includes('Use this service at http://localhost:8080'), origin);
    }
    assert.equal((await visitor.request('POST', '/login', fields, { origin: 'http://localhost:8080' })).status, 401);
  });

  test('a logged-in user cannot use an anonymous token instead of the session one', async () => {
    const anon = new WebClient(s);
    await anon.get('/login');
    const mixed = new WebClient(s);
    mixed.cookies.set('paste_sid', admin.cookies.get('paste_sid') ?? '');
    mixed.cookies.set('paste_csrf', anon.cookies.get('paste_csrf') ?? '');
    assert.equal((await mixed.request('POST', '/', { _csrf: anon.csrf, content: 'x' })).status, 403);
  });

  test('forms must be form-urlencoded: anything else is 415', async () => {
    const r = await req(s, 'POST', '/', {
      headers: { cookie: admin.cookieHeader() },
      body: { _csrf: admin.csrf, content: 'x' },
    });
    assert.equal(r.status, 415);
  });
});
