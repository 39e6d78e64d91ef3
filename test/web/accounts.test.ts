import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { MAX_SESSIONS_PER_USER, SESSION_TOUCH_MS } from '../../src/auth/sessions.ts';
import { cleanup, cli, startServer, type TestServer } from '../helpers/server.ts';
import { ageSession, everythingStored, storedAccounts, storedSessions } from '../helpers/stored.ts';
import { login, register, WebClient } from '../helpers/web-client.ts';

const servers: TestServer[] = [];
async function server(env: Record<string, string> = {}, dataDir?: string): Promise<TestServer> {
  const s = await startServer({
    env: { AUTH_FAIL_LIMIT_PER_MINUTE: '1000', ...env },
    ...(dataDir === undefined ? {} : { dataDir }),
  });
  servers.push(s);
  return s;
}
after(async () => {
  await Promise.all(servers.map((s) => s.stop()));
  await Promise.all([...new Set(servers.map((s) => s.dataDir))].map(cleanup));
});

const accounts = storedAccounts;

describe('registration with OPEN_REGISTRATION off', () => {
  let s: TestServer;
  before(async () => {
    s = await server();
  });

  test('the first user becomes admin and is logged in, with a HttpOnly SameSite=Lax cookie', async () => {
    const c = new WebClient(s);
    const form = await c.get('/register');
    assert.equal(form.status, 200);
    assert.match(form.text, /first user here/);
    const r = await c.post('/register', { name: 'root', password: 'password123', confirm: 'password123' });
    assert.equal(r.status, 303);
    assert.equal(r.location, '/');
    const cookie = ([] as string[]).concat(r.headers['set-cookie'] ?? []).find((l) => l.startsWith('paste_sid='));
    assert.ok(cookie !== undefined);
    assert.match(cookie, /; Path=\/; Max-Age=1209600; HttpOnly; SameSite=Lax$/);
    assert.doesNotMatch(cookie, /Secure/);
    const home = await c.get('/');
    assert.match(home.text, /Log out <span class="who"><bdi>root<\/bdi><\/span>/);
    assert.match(home.text, /href="\/admin\/tokens"/);
    const doc = await accounts(s.dataDir);
    assert.equal(doc.users[0]?.role, 'admin');
    assert.match(doc.users[0]?.password ?? '', /^scrypt\$/);
  });

  test('after the first user, registration is closed: the form says so and a POST is 403', async () => {
    const c = new WebClient(s);
    const form = await c.get('/register');
    assert.match(form.text, /Registration is closed/);
    assert.doesNotMatch(form.text, /name="confirm"/);
    await c.get('/login');
    const r = await c.post('/register', { name: 'mallory', password: 'password123', confirm: 'password123' });
    assert.equal(r.status, 403);
    assert.equal((await accounts(s.dataDir)).users.length, 1);
  });

  test('while registration is closed, no page offers a link to register', async () => {
    const c = new WebClient(s);
    for (const path of ['/', '/login', '/register']) {
      const r = await c.get(path);
      assert.doesNotMatch(r.text, /href="\/register"/, path);
    }
    assert.match((await c.get('/login')).text, /No account yet\? Ask an admin of this server for one\./);
  });
});

describe('the link to register', () => {
  test('is offered for the first account, and after it only with OPEN_REGISTRATION=1', async () => {
    const offered = (s: TestServer): Promise<boolean[]> =>
      Promise.all(
        ['/', '/login'].map(async (path) => /href="\/register"/.test((await new WebClient(s).get(path)).text)),
      );
    const closed = await server();
    assert.deepEqual(await offered(closed), [true, true], 'no account yet');
    await register(new WebClient(closed), 'first');
    assert.deepEqual(await offered(closed), [false, false], 'closed after the first');
    const open = await server({ OPEN_REGISTRATION: '1' });
    await register(new WebClient(open), 'first');
    assert.deepEqual(await offered(open), [true, true], 'open');
  });
});

describe('registration with OPEN_REGISTRATION=1', () => {
  let s: TestServer;
  before(async () => {
    s = await server({ OPEN_REGISTRATION: '1' });
    await register(new WebClient(s), 'first');
  });

  test('later users register as plain users', async () => {
    const c = new WebClient(s);
    await register(c, 'second');
    const home = await c.get('/');
    assert.doesNotMatch(home.text, /href="\/admin\/tokens"/);
    assert.equal((await accounts(s.dataDir)).users.find((u) => u.name === 'second')?.role, 'user');
  });

  const bad: [string, Record<string, string>, RegExp][] = [
    ['a malformed name', { name: 'no spaces', password: 'password123', confirm: 'password123' }, /user name must be/],
    ['a short password', { name: 'shorty', password: 'short', confirm: 'short' }, /at least 8/],
    ['differing passwords', { name: 'typo', password: 'password123', confirm: 'password124' }, /passwords differ/],
    ['a taken name, in any case', { name: 'FIRST', password: 'password123', confirm: 'password123' }, /taken/],
  ];
  for (const [what, fields, message] of bad) {
    test(`refuses ${what} with 400 and keeps the name typed`, async () => {
      const c = new WebClient(s);
      await c.get('/register');
      const r = await c.post('/register', fields);
      assert.equal(r.status, 400);
      assert.match(r.text, message);
      assert.ok(r.text.includes(`value="${fields['name']}"`));
      assert.equal(c.cookies.has('paste_sid'), false);
    });
  }
});

describe('login and logout', () => {
  // Every attempt counts against the account's budget of ten a minute, so each test logs in
  // as its own user.
  let s: TestServer;
  before(async () => {
    s = await server({ OPEN_REGISTRATION: '1' });
    for (const name of ['alice', 'bob', 'carol', 'dave', 'erin', 'frank'])
      await register(new WebClient(s), name, `${name}-password`);
  });

  test('a wrong password and an unknown user get the same 401 answer', async () => {
    const c = new WebClient(s);
    await c.get('/login');
    const wrong = await c.post('/login', { name: 'alice', password: 'nope-nope' });
    const unknown = await c.post('/login', { name: 'nobody', password: 'nope-nope' });
    assert.equal(wrong.status, 401);
    assert.equal(unknown.status, 401);
    assert.match(wrong.text, /Wrong user name or password/);
    assert.match(unknown.text, /Wrong user name or password/);
    assert.equal(c.cookies.has('paste_sid'), false);
  });

  test('logging in goes to the page asked for, but never off-site', async () => {
    const c = new WebClient(s);
    const gate = await c.get('/api_keys.php');
    assert.equal(gate.status, 302);
    assert.equal(gate.location, '/login?next=%2Fapi_keys.php');
    const form = await c.get(gate.location ?? '');
    assert.match(form.text, /name="next" value="\/api_keys.php"/);
    const r = await c.post('/login', { name: 'ALICE', password: 'alice-password', next: '/api_keys.php' });
    assert.equal(r.status, 303);
    assert.equal(r.location, '/api_keys.php');
    assert.equal((await c.get('/api_keys.php')).status, 200);
    for (const next of ['//evil.example/x', '/\\evil.example', 'https://evil.example/', 'javascript:alert(1)']) {
      const again = new WebClient(s);
      await again.get('/login');
      assert.equal((await again.post('/login', { name: 'alice', password: 'alice-password', next })).location, '/');
    }
  });

  test('a logged-in visitor of /login or /register is sent on', async () => {
    const c = new WebClient(s);
    await login(c, 'bob', 'bob-password');
    assert.equal((await c.get('/login?next=/my')).location, '/my');
    assert.equal((await c.get('/register')).location, '/');
  });

  test('registering while logged in creates no account and keeps the session', async () => {
    const c = new WebClient(s);
    await login(c, 'bob', 'bob-password');
    const sid = c.cookies.get('paste_sid');
    const users = (await accounts(s.dataDir)).users.length;
    const r = await c.post('/register', { name: 'bob-two', password: 'password123', confirm: 'password123' });
    assert.equal(r.status, 303);
    assert.equal(r.location, '/');
    assert.equal(r.headers['set-cookie'], undefined, 'no new session cookie');
    assert.equal(c.cookies.get('paste_sid'), sid);
    assert.equal((await accounts(s.dataDir)).users.length, users);
    assert.match((await c.get('/')).text, /<span class="who"><bdi>bob<\/bdi><\/span>/);
  });

  test('logout ends the session for good and clears the cookie', async () => {
    const c = new WebClient(s);
    await login(c, 'carol', 'carol-password');
    const sid = c.cookies.get('paste_sid') ?? '';
    const r = await c.post('/logout', {});
    assert.equal(r.status, 303);
    assert.equal(c.cookies.has('paste_sid'), false);
    const stale = new WebClient(s);
    stale.cookies.set('paste_sid', sid);
    const after = await stale.get('/api_keys.php');
    assert.equal(after.status, 302);
    assert.match(String(after.headers['set-cookie']), /paste_sid=; Path=\/; Max-Age=0/);
  });

  test('a new login replaces the session id (no fixation)', async () => {
    const c = new WebClient(s);
    await login(c, 'dave', 'dave-password');
    const first = c.cookies.get('paste_sid');
    await login(c, 'dave', 'dave-password');
    assert.notEqual(c.cookies.get('paste_sid'), first);
    const old = new WebClient(s);
    old.cookies.set('paste_sid', first ?? '');
    assert.equal((await old.get('/my')).status, 302);
  });

  test('sessions are stored as a SHA-256 of the id, never the id itself', async () => {
    const c = new WebClient(s);
    await login(c, 'erin', 'erin-password');
    const sid = c.cookies.get('paste_sid') ?? '';
    const sessions = await storedSessions(s.dataDir);
    assert.ok(sessions.some((x) => x.key === createHash('sha256').update(sid).digest('hex')));
    for (const { record } of sessions) assert.doesNotMatch(JSON.stringify(record), new RegExp(sid));
    assert.doesNotMatch(await everythingStored(s.dataDir), new RegExp(sid));
  });

  test('ten login attempts per account per minute, then 429 even with the right password', async () => {
    const c = new WebClient(s);
    await c.get('/login');
    for (let i = 0; i < 10; i++)
      assert.equal((await c.post('/login', { name: 'target', password: `guess-${i}-xx` })).status, 401);
    const r = await c.post('/login', { name: 'target', password: 'anything-at-all' });
    assert.equal(r.status, 429);
    assert.match(String(r.headers['retry-after']), /^\d+$/);
    assert.match(r.text, /Too many login attempts/);
    // Another account from the same address is unaffected.
    assert.equal((await c.post('/login', { name: 'frank', password: 'frank-password' })).status, 303);
  });
});

describe('sessions per user', () => {
  test('a login past MAX_SESSIONS_PER_USER ends the least recently used session; the others stay', async () => {
    const s = await startServer({ env: { AUTH_FAIL_LIMIT_PER_MINUTE: '1000' } });
    await cli(s.dataDir, ['user', 'add', 'gina', '--password-stdin'], 'gina-password');
    const clients: WebClient[] = [];
    const signIn = async (): Promise<void> => {
      // Each login spends the account's budget of ten a minute: a minute passes every nine.
      if (clients.length % 9 === 0) s.clock.advance(61_000);
      const c = new WebClient(s);
      await login(c, 'gina', 'gina-password');
      clients.push(c);
    };
    for (let i = 0; i < MAX_SESSIONS_PER_USER; i++) await signIn();
    const mine = async (): Promise<number> => {
      const id = (await accounts(s.dataDir)).users.find((u) => u.name === 'gina')?.id;
      return (await storedSessions(s.dataDir)).filter((x) => x.record['user_id'] === id).length;
    };
    assert.equal(await mine(), MAX_SESSIONS_PER_USER);
    // The first session is used again later than the second: the second is now the least recently used.
    s.clock.advance(SESSION_TOUCH_MS + 1_000);
    assert.equal((await (clients[0] as WebClient).get('/my')).status, 200);
    await signIn();
    assert.equal(await mine(), MAX_SESSIONS_PER_USER);
    const statuses = [];
    for (const c of clients) statuses.push((await c.get('/my')).status);
    assert.deepEqual(statuses, [200, 302, ...new Array<number>(MAX_SESSIONS_PER_USER - 1).fill(200)]);
  });
});

describe('login rate limit per address', () => {
  test('AUTH_FAIL_LIMIT_PER_MINUTE attempts per client address, whatever the account', async () => {
    const s = await server({ AUTH_FAIL_LIMIT_PER_MINUTE: '3' });
    const c = new WebClient(s);
    await c.get('/login');
    for (const name of ['a', 'b', 'c'])
      assert.equal((await c.post('/login', { name, password: 'password123' })).status, 401);
    assert.equal((await c.post('/login', { name: 'd', password: 'password123' })).status, 429);
  });
});

describe('sessions across restarts', () => {
  test('a session survives a restart, and one idle longer than SESSION_IDLE_DAYS does not', async () => {
    let s = await server();
    const c = new WebClient(s);
    await register(c, 'keeper');
    const idle = new WebClient(s);
    await login(idle, 'keeper');
    await s.stop();

    // Age the second session as stored by 15 days (the default idle limit is 14).
    const key = createHash('sha256')
      .update(idle.cookies.get('paste_sid') ?? '')
      .digest('hex');
    await ageSession(s.dataDir, key, 15 * 86_400_000);

    s = await server({}, s.dataDir);
    const kept = new WebClient(s);
    kept.cookies.set('paste_sid', c.cookies.get('paste_sid') ?? '');
    const page = await kept.get('/api_keys.php');
    assert.equal(page.status, 200);
    assert.match(page.text, /My API Keys/);

    const gone = new WebClient(s);
    gone.cookies.set('paste_sid', idle.cookies.get('paste_sid') ?? '');
    const r = await gone.get('/api_keys.php');
    assert.equal(r.status, 302);
    assert.equal(gone.cookies.has('paste_sid'), false);
    assert.ok(!(await storedSessions(s.dataDir)).some((x) => x.key === key), 'the expired session is removed');
  });

  test('with an https BASE_URL every cookie is Secure and __Host- named; unprefixed ones are ignored', async () => {
    const s = await server({ BASE_URL: 'https://paste.example' });
    const c = new WebClient(s);
    const form = await c.get('/register');
    assert.match(
      String(form.headers['set-cookie']),
      /^__Host-paste_csrf=[^;]+; Path=\/; Max-Age=604800; HttpOnly; Secure; SameSite=Lax$/,
    );
    const r = await c.post('/register', { name: 'tls', password: 'password123', confirm: 'password123' });
    assert.match(
      String(r.headers['set-cookie']),
      /^__Host-paste_sid=[^;]+; Path=\/; Max-Age=1209600; HttpOnly; Secure; SameSite=Lax$/,
    );
    assert.equal((await c.get('/my')).status, 200, 'the prefixed session cookie logs in');
    // The same values under the plain names, as a sibling host could plant them, count for nothing.
    const planted = new WebClient(s);
    planted.cookies.set('paste_sid', c.cookies.get('__Host-paste_sid') ?? '');
    assert.equal((await planted.get('/my')).status, 302);
    planted.cookies.set('paste_csrf', c.cookies.get('__Host-paste_csrf') ?? '');
    const post = await planted.request('POST', '/login', {
      _csrf: c.cookies.get('__Host-paste_csrf') ?? '',
      name: 'tls',
      password: 'password123',
    });
    assert.equal(post.status, 403);
  });
});
