import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { before, describe, test } from 'node:test';
import {
  Browser,
  type BrowserRes,
  startOidcProvider,
  submitLogin,
  type TestProvider,
} from '../helpers/oidc-provider.ts';
import { OIDC_REFUSALS_AUDITED_PER_MINUTE } from '../../src/web/pages/oidc.ts';
import { cli, startServer, type AppServer } from '../helpers/server.ts';
import { auditEntries, storedAccounts } from '../helpers/stored.ts';
import { WebClient } from '../helpers/web-client.ts';

let op: TestProvider;
/** Signs in to accounts that exist; OIDC_ADMIN_GROUP=admins. */
let app: AppServer;
/** OIDC_CREATE=1, OIDC_ADMIN_GROUP=admins. */
let creator: AppServer;
/** Its only admin is `boss`; OIDC_ADMIN_GROUP=admins. */
let solo: AppServer;
/** Stopped mid-flow, for another instance on its storage to finish the flow. */
let roamer: AppServer;

before(async () => {
  op = await startOidcProvider();
  app = await startServer({
    env: op.env({ OIDC_ADMIN_GROUP: 'admins', OIDC_BUTTON_LABEL: 'Sign in with <Test SSO>' }),
  });
  creator = await startServer({ env: op.env({ OIDC_CREATE: '1', OIDC_ADMIN_GROUP: 'admins' }) });
  solo = await startServer({ env: op.env({ OIDC_ADMIN_GROUP: 'admins' }) });
  roamer = await startServer({ env: op.env() });
  for (const s of [app, creator, solo, roamer]) op.register(s.url);
  for (const [s, name, admin] of [
    [app, 'root', true],
    [app, 'alice', false],
    [app, 'dora', false],
    [creator, 'root', true],
    [solo, 'boss', true],
    [roamer, 'alice', false],
  ] as const)
    await cli(s.dataDir, ['user', 'add', name, ...(admin ? ['--admin'] : []), '--password-stdin'], 'password123');
  await cli(app.dataDir, ['user', 'disable', 'dora']);
  op.users.set('alice-sub', { preferred_username: 'alice' });
  op.users.set('mallory-sub', { preferred_username: 'alice' });
  op.users.set('nobody-sub', { preferred_username: 'nobody' });
  op.users.set('dora-sub', { preferred_username: 'dora' });
  op.users.set('boss-sub', { preferred_username: 'boss', groups: [] });
});

const signedInAs = (r: BrowserRes): string | undefined => /title="Log out ([^"]+)"/.exec(r.text)?.[1];

/** From the app's /login/oidc through the provider's login form, and back; the last page. */
async function signIn(s: AppServer, login: string, b = new Browser()): Promise<BrowserRes> {
  const form = await b.follow(`${s.url}/login/oidc`);
  return submitLogin(b, form, login);
}

/** As signIn, but stops at the callback URL the provider sends the browser to, unvisited. */
async function callbackUrl(s: AppServer, login: string, b: Browser): Promise<string> {
  const form = await b.follow(`${s.url}/login/oidc`);
  const action = /<form[^>]*action="([^"]+)"/.exec(form.text)?.[1] ?? '';
  let r = await b.fetch(new URL(action, form.url).href, { form: { prompt: 'login', login, password: 'x' } });
  while (r.location !== null && !r.location.includes('/login/oidc/callback')) r = await b.fetch(r.location);
  assert.ok(r.location !== null, r.text);
  return r.location;
}

const refusals = async (s: AppServer): Promise<Record<string, unknown>[]> =>
  (await auditEntries(s.dataDir)).filter((e) => e['action'] === 'oidc.refused');

const lastRefusal = async (s: AppServer): Promise<unknown> => (await refusals(s)).at(-1)?.['after'];

describe('sign-in with OpenID Connect', () => {
  test('off without OIDC_ISSUER: /login/oidc is 404 and the login page has no button', async () => {
    const plain = await startServer();
    const c = new WebClient(plain);
    assert.equal((await c.get('/login/oidc')).status, 404);
    assert.equal((await c.get('/login/oidc/callback?code=x&state=y')).status, 404);
    assert.doesNotMatch((await c.get('/login')).text, /login\/oidc/);
  });

  test('openid-client is only ever imported on demand, so a server without OIDC_ISSUER never loads it', async () => {
    const src = new URL('../../src/', import.meta.url);
    const files = (await readdir(src, { recursive: true })).filter((f) => f.endsWith('.ts'));
    const eager: string[] = [];
    for (const f of files) {
      const text = await readFile(new URL(f, src), 'utf8');
      for (const m of text.matchAll(/^import\s+(?!type\b)[^;]*from\s+'openid-client'/gm)) eager.push(`${f}: ${m[0]}`);
    }
    assert.deepEqual(eager, []);
  });

  test('a flow started on one instance is finished by another on the same storage', async () => {
    const b = new Browser();
    const url = await callbackUrl(roamer, 'alice-sub', b);
    const flow = b.cookie(new URL(roamer.url).host, 'paste_oidc_flow');
    assert.ok(flow !== undefined);
    await roamer.stop();
    // Every instance has the same public address (BASE_URL), and the same server key in the storage.
    const next = await startServer({ dataDir: roamer.dataDir, env: op.env({ BASE_URL: roamer.url }) });
    const c = new WebClient(next);
    c.cookies.set('paste_oidc_flow', flow);
    const back = new URL(url);
    const done = await c.get(back.pathname + back.search);
    assert.equal(done.status, 303, done.text);
    assert.equal(/title="Log out ([^"]+)"/.exec((await c.get('/')).text)?.[1], 'alice');
  });

  test('the login page shows OIDC_BUTTON_LABEL (escaped) beside the password form', async () => {
    const page = await new WebClient(app).get('/login?next=%2Fmy');
    assert.match(
      page.text,
      /<a class="btn btn-block" href="\/login\/oidc\?next=%2Fmy">Sign in with &lt;Test SSO&gt;<\/a>/,
    );
    assert.match(page.text, /name="password"/);
  });

  test('a full sign-in: the named account, linked to its sub, with a session; the flow cookie is spent', async () => {
    const b = new Browser();
    const home = await signIn(app, 'alice-sub', b);
    assert.equal(home.status, 200, home.text);
    assert.equal(signedInAs(home), 'alice');
    const alice = (await storedAccounts(app.dataDir)).users.find((u) => u.name === 'alice');
    assert.equal(alice?.['oidc_subject'], 'alice-sub');
    assert.equal(alice?.['oidc_issuer'], op.issuer);
    assert.equal(typeof alice?.['last_login_at'], 'number');
    assert.equal(b.cookie(new URL(app.url).host, 'paste_oidc_flow'), undefined);
    const link = (await auditEntries(app.dataDir)).find((e) => e['action'] === 'user.oidc_link');
    assert.equal(link?.['user'], 'openid connect');
    assert.equal(link?.['target'], 'user:alice');
    // The session is a real one: its pages and forms work.
    const my = await b.fetch(`${app.url}/my`);
    assert.equal(my.status, 200);
  });

  test('a rename at the provider still signs in to the linked account; another sub claiming the name is refused', async () => {
    await signIn(app, 'alice-sub');
    op.users.set('alice-sub', { preferred_username: 'alice-renamed' });
    try {
      assert.equal(signedInAs(await signIn(app, 'alice-sub')), 'alice');
    } finally {
      op.users.set('alice-sub', { preferred_username: 'alice' });
    }
    const r = await signIn(app, 'mallory-sub');
    assert.equal(r.status, 403);
    assert.match(r.text, /The account &quot;alice&quot; belongs to another user of the sign-in provider/);
    assert.equal(signedInAs(r), undefined);
    assert.deepEqual(await lastRefusal(app), { reason: 'linked_elsewhere', detail: '' });
    const names = (await storedAccounts(app.dataDir)).users.map((u) => u.name).sort();
    assert.deepEqual(names, ['alice', 'dora', 'root']);
  });

  test('without OIDC_CREATE an unknown user gets a clear page; with it the account is made without a password', async () => {
    const r = await signIn(app, 'nobody-sub');
    assert.equal(r.status, 403);
    assert.match(r.text, /There is no account &quot;nobody&quot; here/);
    assert.deepEqual(await lastRefusal(app), { reason: 'no_account', detail: '' });
    assert.equal(signedInAs(await signIn(creator, 'nobody-sub')), 'nobody');
    const made = (await storedAccounts(creator.dataDir)).users.find((u) => u.name === 'nobody');
    assert.deepEqual([made?.role, made?.password, made?.['oidc_subject']], ['user', null, 'nobody-sub']);
    const pw = new WebClient(creator);
    await pw.get('/login');
    assert.equal((await pw.post('/login', { name: 'nobody', password: 'password123', next: '/' })).status, 401);
  });

  test('OIDC_ADMIN_GROUP makes an admin and takes admin away at the next sign-in', async () => {
    op.users.set('gina-sub', { preferred_username: 'gina', groups: ['dev', 'admins'] });
    const b = new Browser();
    await signIn(creator, 'gina-sub', b);
    assert.equal((await b.fetch(`${creator.url}/admin/users`)).status, 200);
    op.users.set('gina-sub', { preferred_username: 'gina', groups: ['dev'] });
    const later = new Browser();
    await signIn(creator, 'gina-sub', later);
    assert.equal((await later.fetch(`${creator.url}/admin/users`)).status, 403);
    const gina = (await auditEntries(creator.dataDir)).filter((e) => e['target'] === 'user:gina');
    assert.deepEqual(
      gina.map((e) => [e['action'], e['user']]),
      [
        ['user.add', 'openid connect'],
        ['user.oidc_link', 'openid connect'],
        ['user.unadmin', 'openid connect'],
      ],
    );
  });

  test('a user name and groups the ID token lacks are read from the userinfo endpoint', async () => {
    op.users.set('hal-sub', { preferred_username: 'hal', groups: ['admins'] });
    op.tamper = 'userinfo-only';
    const b = new Browser();
    try {
      assert.equal(signedInAs(await signIn(creator, 'hal-sub', b)), 'hal');
    } finally {
      op.tamper = null;
    }
    assert.equal((await b.fetch(`${creator.url}/admin/users`)).status, 200);
  });

  test('the last enabled admin stays admin outside the group', async () => {
    const b = new Browser();
    assert.equal(signedInAs(await signIn(solo, 'boss-sub', b)), 'boss');
    assert.equal((await b.fetch(`${solo.url}/admin/users`)).status, 200);
  });

  test('a disabled user stays out', async () => {
    const r = await signIn(app, 'dora-sub');
    assert.equal(r.status, 403);
    assert.match(r.text, /This account is disabled/);
    assert.equal(signedInAs(r), undefined);
    assert.deepEqual(await lastRefusal(app), { reason: 'disabled', detail: '' });
  });

  test('Log out goes through the provider\u2019s end_session_endpoint after an SSO sign-in', async () => {
    const b = new Browser();
    await signIn(app, 'alice-sub', b);
    const home = await b.fetch(`${app.url}/`);
    const csrf = /name="_csrf" value="([^"]+)"/.exec(home.text)?.[1] ?? '';
    const out = await b.fetch(`${app.url}/logout`, { form: { _csrf: csrf } });
    assert.equal(out.status, 200, out.text);
    const away = /url=([^"]+)"?/.exec(/<a href="([^"]+)">continue/.exec(out.text)?.[1] ?? '')?.[0] ?? '';
    assert.ok(away === '' || away.length > 0);
    const link = (/<a href="([^"]+)">continue/.exec(out.text)?.[1] ?? '').replaceAll('&amp;', '&');
    const end = new URL(link);
    assert.equal(end.origin, op.issuer);
    assert.equal(end.searchParams.get('client_id'), 'paste');
    assert.equal(end.searchParams.get('post_logout_redirect_uri'), `${app.url}/`);
    assert.equal(signedInAs(await b.fetch(`${app.url}/`)), undefined);
  });

  test('a key rotation at the provider: the next sign-in, at once, is checked with the new key', async () => {
    // The app has just fetched the provider's keys: this sign-in is the one before the rotation.
    assert.equal(signedInAs(await signIn(app, 'alice-sub')), 'alice');
    const before = op.keyIds;
    await op.rotate();
    const jwks = (await (await fetch(`${op.issuer}/jwks`)).json()) as { keys: { kid: string }[] };
    const published = jwks.keys.map((k) => k.kid);
    assert.deepEqual(published, op.keyIds);
    assert.ok(published.every((kid) => !before.includes(kid)));
    const r = await signIn(app, 'alice-sub');
    assert.equal(signedInAs(r), 'alice', r.text);
  });
});

describe('the callback refuses', () => {
  test('an error from the provider (access_denied), escaped', async () => {
    const b = new Browser();
    await b.fetch(`${app.url}/login/oidc`);
    const r = await b.fetch(
      `${app.url}/login/oidc/callback?error=access_denied&error_description=${encodeURIComponent('<script>x</script>')}`,
    );
    assert.equal(r.status, 403);
    assert.match(r.text, /refused the sign-in: access_denied \(&lt;script&gt;x&lt;\/script&gt;\)/);
    assert.doesNotMatch(r.text, /<script>x/);
    assert.deepEqual(await lastRefusal(app), { reason: 'provider_error', detail: 'access_denied' });
  });

  test('refusals are audited up to OIDC_REFUSALS_AUDITED_PER_MINUTE a client a minute; the pages go on', async () => {
    const c = new WebClient(solo);
    for (let i = 0; i <= OIDC_REFUSALS_AUDITED_PER_MINUTE; i++)
      assert.equal((await c.get(`/login/oidc/callback?error=flood${i}`)).status, 403);
    assert.equal((await refusals(solo)).length, OIDC_REFUSALS_AUDITED_PER_MINUTE);
  });

  test('a forged state', async () => {
    const b = new Browser();
    await b.fetch(`${app.url}/login/oidc`);
    const r = await b.fetch(`${app.url}/login/oidc/callback?code=abc&state=forged`);
    assert.equal(r.status, 400);
    assert.match(r.text, /does not match the one started here/);
    assert.deepEqual(await lastRefusal(app), { reason: 'state', detail: '' });
  });

  test('a replayed callback, in the same browser or another', async () => {
    const b = new Browser();
    const url = await callbackUrl(app, 'alice-sub', b);
    const first = await b.follow(url);
    assert.equal(signedInAs(first), 'alice');
    for (const again of [b, new Browser()]) {
      const r = await again.fetch(url);
      assert.equal(r.status, 400);
      assert.match(r.text, /expired or was already used/);
      assert.deepEqual(await lastRefusal(app), { reason: 'no_flow', detail: '' });
    }
  });

  const title = {
    nonce: 'a wrong nonce',
    'other-client': 'another client as its audience',
    expired: 'an expiry past',
    'unpublished-key': 'a signature by a key the provider never published',
  };
  for (const [tamper, words] of [
    ['nonce', /nonce/],
    ['other-client', /aud/],
    ['expired', /exp/],
    ['unpublished-key', /signature/],
  ] as const)
    test(`an ID token with ${title[tamper]}`, async () => {
      op.tamper = tamper;
      let r: BrowserRes;
      try {
        r = await signIn(app, 'alice-sub');
      } finally {
        op.tamper = null;
      }
      assert.equal(r.status, 403, r.text);
      assert.match(r.text, /answer failed its checks/);
      assert.equal(signedInAs(r), undefined);
      const last = (await lastRefusal(app)) as { reason: string; detail: string };
      assert.equal(last.reason, 'token');
      assert.match(last.detail, words);
    });
});
