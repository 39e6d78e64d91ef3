import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { cli, makeToken, req, startServer, type TestServer } from '../helpers/server.ts';
import { auditEntries, everythingStored, storedAccounts, storedSessions } from '../helpers/stored.ts';
import { login, registerAll, WebClient, type WebRes } from '../helpers/web-client.ts';

let s: TestServer;
let admin: WebClient;

before(async () => {
  s = await startServer({ env: { OPEN_REGISTRATION: '1' } });
  [admin] = await registerAll(s, 'root');
});

const change = async (c: WebClient, fields: Record<string, string>): Promise<WebRes> => {
  await c.get('/account');
  return c.post('/account', fields);
};

const tryLogin = async (name: string, password: string): Promise<WebRes> => {
  const c = new WebClient(s);
  await c.get('/login');
  return c.post('/login', { name, password, next: '/' });
};

const storedUser = async (name: string) => (await storedAccounts(s.dataDir)).users.find((u) => u.name === name);

/** The admin adds (or resets) a user on the Users page; returns the temporary password it shows once. */
async function handOut(action: 'add' | 'reset', name: string): Promise<string> {
  await admin.get('/admin/users');
  const r = await admin.post('/admin/users', { action, name });
  assert.equal(r.status, 303, r.text);
  const page = await admin.get((r.location ?? '').split('#')[0] ?? '');
  const password = /id="temporary-password" class="copyable" value="([A-Za-z0-9]{16})"/.exec(page.text)?.[1];
  assert.ok(password !== undefined, 'the temporary password is shown');
  return password;
}

describe('the account page changes your own password', () => {
  test('needs a session; the change needs the current password and ends the other sessions only', async () => {
    assert.match((await new WebClient(s).get('/account')).location ?? '', /^\/login\?next=%2Faccount$/);
    await cli(s.dataDir, ['user', 'add', 'alice', '--password-stdin'], 'password123');
    const here = new WebClient(s);
    const elsewhere = new WebClient(s);
    await login(here, 'alice');
    await login(elsewhere, 'alice');
    await login(admin, 'root');
    assert.equal((await here.get('/account')).status, 200);

    const wrong = await change(here, { current: 'not it at all', password: 'brand-new-pw', confirm: 'brand-new-pw' });
    assert.equal(wrong.status, 403);
    assert.match(wrong.text, /The current password is wrong/);
    // Registration's rules, in registration's words.
    const short = await change(here, { current: 'password123', password: 'short', confirm: 'short' });
    assert.equal(short.status, 400);
    assert.match(short.text, /The password must be at least 8 characters/);
    const differ = await change(here, { current: 'password123', password: 'brand-new-pw', confirm: 'brand-new-px' });
    assert.equal(differ.status, 400);
    assert.match(differ.text, /The two new passwords differ/);
    assert.equal((await tryLogin('alice', 'password123')).status, 303, 'nothing changed yet');
    const sessionsBefore = (await storedSessions(s.dataDir)).length;

    const done = await change(here, { current: 'password123', password: 'brand-new-pw', confirm: 'brand-new-pw' });
    assert.equal(done.status, 303);
    assert.equal(done.location, '/account?changed=1');
    assert.match((await here.get('/account?changed=1')).text, /Your password was changed/);
    assert.equal((await here.get('/my')).status, 200, 'this session goes on');
    assert.match((await elsewhere.get('/my')).location ?? '', /^\/login/, 'the other one ended');
    assert.equal((await admin.get('/my')).status, 200, "another user's session is untouched");
    // alice had three sessions (here, elsewhere, the check login): two of them ended.
    assert.equal((await storedSessions(s.dataDir)).length, sessionsBefore - 2);
    assert.equal((await tryLogin('alice', 'password123')).status, 401);
    assert.equal((await tryLogin('alice', 'brand-new-pw')).status, 303);

    const entry = (await auditEntries(s.dataDir)).at(-1) ?? {};
    assert.equal(entry['action'], 'user.password_change');
    assert.equal(entry['target'], 'user:alice');
    assert.equal(entry['via'], 'web');
    assert.equal(entry['user'], 'alice');
    const stored = await everythingStored(s.dataDir);
    assert.equal(stored.includes('brand-new-pw'), false, 'no password in any file, log or row');
  });

  test('a POST without the CSRF token is refused and changes nothing', async () => {
    await cli(s.dataDir, ['user', 'add', 'csrfy', '--password-stdin'], 'password123');
    const c = new WebClient(s);
    await login(c, 'csrfy');
    const r = await c.postBare('/account', { current: 'password123', password: 'another-one', confirm: 'another-one' });
    assert.equal(r.status, 403);
    assert.equal((await tryLogin('csrfy', 'password123')).status, 303);
  });

  test('wrong current passwords spend the login failure budget: 429 once spent, the login form too', async () => {
    const t = await startServer({ env: { AUTH_FAIL_LIMIT_PER_MINUTE: '3' } });
    const [owner] = await registerAll(t, 'owner');
    await owner.get('/account');
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++)
      statuses.push(
        (await owner.post('/account', { current: `guess-${i}xx`, password: 'newpassword', confirm: 'newpassword' }))
          .status,
      );
    assert.deepEqual(statuses, [403, 403, 403, 429]);
    const right = await owner.post('/account', {
      current: 'password123',
      password: 'newpassword',
      confirm: 'newpassword',
    });
    assert.equal(right.status, 429, 'even the right password waits');
    assert.match(String(right.headers['retry-after']), /^\d+$/);
    const c = new WebClient(t);
    await c.get('/login');
    assert.equal((await c.post('/login', { name: 'owner', password: 'password123', next: '/' })).status, 429);
  });
});

describe('a temporary password from the Users page', () => {
  test('is changed at the first sign-in before any other page; API tokens are unaffected', async () => {
    const temporary = await handOut('add', 'carol');
    assert.equal((await storedUser('carol'))?.password_temporary, true, 'stored on the user');
    const row = async (): Promise<string> =>
      /<tr id="user-carol">([\s\S]*?)<\/tr>/.exec((await admin.get('/admin/users')).text)?.[1] ?? '';
    assert.match(await row(), /<span class="badge">temporary password<\/span>/, 'the admins see it');
    const token = await makeToken(s.dataDir, { user: 'carol', scopes: 'read,write' });
    const carol = new WebClient(s);
    await login(carol, 'carol', temporary);
    for (const path of ['/', '/my', '/api_keys.php', '/p/AAAAAAAAAA'])
      assert.equal((await carol.get(path)).location, '/account', path);
    const page = await carol.get('/account');
    assert.equal(page.status, 200);
    assert.match(page.text, /temporary one an admin gave you/);
    const post = await carol.post('/', { content: 'x', language: 'auto', privacy: 'public', expiry: 'never' });
    assert.equal(post.status, 303);
    assert.equal(post.location, '/account', 'a form elsewhere is not taken either');
    const api = await req(s, 'POST', '/api/v1/paste_create.php', { token, body: { content: 'by token' } });
    assert.equal(api.status, 200, 'the API with a token does not wait for the change');

    const done = await carol.post('/account', {
      current: temporary,
      password: 'carols-own-pw',
      confirm: 'carols-own-pw',
    });
    assert.equal(done.status, 303);
    assert.equal((await carol.get('/my')).status, 200);
    assert.equal((await storedUser('carol'))?.password_temporary, undefined);
    assert.doesNotMatch(await row(), /temporary password/);
    const entry = (await auditEntries(s.dataDir)).at(-1) ?? {};
    assert.deepEqual(
      [entry['action'], entry['before'], entry['after']],
      ['user.password_change', { temporary: true }, { temporary: false }],
    );
  });

  test('a reset on the Users page ends the sessions, hands out a temporary password, and it must be changed', async () => {
    await cli(s.dataDir, ['user', 'add', 'dan', '--password-stdin'], 'password123');
    const dan = new WebClient(s);
    await login(dan, 'dan');
    const temporary = await handOut('reset', 'dan');
    assert.match((await dan.get('/my')).location ?? '', /^\/login/, 'the old sessions ended');
    assert.equal((await tryLogin('dan', 'password123')).status, 401);
    await login(dan, 'dan', temporary);
    assert.equal((await dan.get('/my')).location, '/account');
    const entry = (await auditEntries(s.dataDir)).at(-1) ?? {};
    assert.deepEqual([entry['action'], entry['user'], entry['after']], ['user.passwd', 'root', { temporary: true }]);
    // A password the operator sets with the CLI is theirs to hand over: not temporary.
    await cli(s.dataDir, ['user', 'passwd', 'dan'], 'password456');
    assert.equal((await dan.get('/my')).status, 200);
  });
});
