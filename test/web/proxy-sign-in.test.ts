import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { MAX_SESSIONS_PER_USER } from '../../src/auth/sessions.ts';
import { cli, req, startServer, type TestServer } from '../helpers/server.ts';
import { auditEntries, storedAccounts, storedSessions } from '../helpers/stored.ts';
import { WebClient, type WebRes } from '../helpers/web-client.ts';

const LOGOUT = 'https://auth.example.test/logout?rd=paste';
/** The proxy's address is 127.0.0.1; a request from 127.0.0.2 is anyone else on the network. */
const ELSEWHERE = '127.0.0.2';

let proxied: TestServer;

before(async () => {
  proxied = await startServer({
    env: {
      AUTH_PROXY_HEADER: 'Remote-User',
      AUTH_PROXY_TRUSTED: '127.0.0.1/32',
      AUTH_PROXY_CREATE: '1',
      AUTH_PROXY_ADMIN_GROUP: 'admins',
      AUTH_PROXY_LOGOUT_URL: LOGOUT,
    },
  });
  await cli(proxied.dataDir, ['user', 'add', 'root', '--admin', '--password-stdin'], 'password123');
  await cli(proxied.dataDir, ['user', 'add', 'alice', '--password-stdin'], 'password123');
});

const as = (name: string, groups?: string): Record<string, string> => ({
  'remote-user': name,
  ...(groups === undefined ? {} : { 'remote-groups': groups }),
});

const sessionsOf = async (s: TestServer, name: string): Promise<number> => {
  const user = (await storedAccounts(s.dataDir)).users.find((u) => u.name === name);
  return (await storedSessions(s.dataDir)).filter((x) => x.record['user_id'] === user?.id).length;
};

const signedInAs = (r: WebRes): string | undefined => /title="Log out ([^"]+)"/.exec(r.text)?.[1];
const setsSession = (r: WebRes): boolean =>
  ([r.headers['set-cookie'] ?? []].flat() as string[]).some((c) => c.startsWith('paste_sid=') && !/Max-Age=0/.test(c));

describe('sign-in by a trusted proxy', () => {
  test('off by default: the header means nothing', async () => {
    const plain = await startServer();
    await cli(plain.dataDir, ['user', 'add', 'alice', '--password-stdin'], 'password123');
    const c = new WebClient(plain);
    const r = await c.get('/my', as('alice'));
    assert.match(r.location ?? '', /^\/login/);
    assert.equal(setsSession(r), false);
    assert.equal(signedInAs(await c.get('/', as('alice'))), undefined);
  });

  test('a trusted peer with the header is signed in once: one session, whose CSRF token works for forms', async () => {
    const c = new WebClient(proxied);
    const first = await c.get('/my', as('alice'));
    assert.equal(first.status, 200);
    assert.equal(signedInAs(first), 'alice');
    assert.equal(setsSession(first), true);
    const again = await c.get('/', as('alice'));
    assert.equal(signedInAs(again), 'alice');
    assert.equal(setsSession(again), false, 'the session is reused, not made per request');
    assert.equal(await sessionsOf(proxied, 'alice'), 1);
    const made = await c.request(
      'POST',
      '/',
      { _csrf: c.csrf, content: 'through the proxy', language: 'auto', privacy: 'public', expiry: 'never' },
      as('alice'),
    );
    assert.equal(made.status, 303, made.text);
    assert.match(made.location ?? '', /^\/p\/[A-Za-z0-9]{10}$/);
    const stored = (await storedAccounts(proxied.dataDir)).users.find((u) => u.name === 'alice');
    assert.equal(typeof stored?.last_login_at, 'number', 'the sign-in is a login');
    // The proxy decides who this is: another name on the same cookie is another user.
    const other = await c.get('/my', as('root'));
    assert.equal(signedInAs(other), 'root');
    assert.equal(await sessionsOf(proxied, 'alice'), 0, "alice's session ended with the switch");
  });

  test('from any other address the header is ignored (logged once), and the API never reads it', async () => {
    const c = new WebClient({ port: proxied.port, localAddress: ELSEWHERE });
    for (let i = 0; i < 3; i++) {
      const r = await c.get('/my', as('root'));
      assert.match(r.location ?? '', /^\/login/);
      assert.equal(setsSession(r), false);
    }
    assert.equal(proxied.output().split('not from AUTH_PROXY_TRUSTED').length - 1, 1, 'said once, not per request');
    assert.match(
      proxied.output(),
      /the remote-user header came from (::ffff:)?127\.0\.0\.2, not from AUTH_PROXY_TRUSTED/,
    );
    // Even from the proxy's own address, the API wants its token.
    const api = await req(proxied, 'POST', '/api/v1/paste_create.php', { headers: as('root'), body: { content: 'x' } });
    assert.equal(api.status, 401);
  });

  test('AUTH_PROXY_CREATE makes unknown users without a password; names are checked as the CLI checks them', async () => {
    const c = new WebClient(proxied);
    assert.equal(signedInAs(await c.get('/my', as('newbie'))), 'newbie');
    const newbie = (await storedAccounts(proxied.dataDir)).users.find((u) => u.name === 'newbie');
    assert.deepEqual([newbie?.role, newbie?.password], ['user', null]);
    const pw = new WebClient(proxied);
    await pw.get('/login');
    assert.equal((await pw.post('/login', { name: 'newbie', password: '', next: '/' })).status, 401);
    for (const bad of ['-dash', 'a b', 'x@example.com', 'a'.repeat(33)]) {
      const r = await new WebClient(proxied).get('/', as(bad));
      assert.equal(r.status, 403, bad);
      assert.match(r.text, /named a user this server cannot have/);
    }
    const names = (await storedAccounts(proxied.dataDir)).users.map((u) => u.name);
    assert.deepEqual(names.sort(), ['alice', 'newbie', 'root']);
  });

  test('AUTH_PROXY_ADMIN_GROUP makes admins, and leaving the group unmakes them', async () => {
    const c = new WebClient(proxied);
    assert.equal((await c.get('/admin/users', as('gina', 'dev, admins'))).status, 200, 'created as an admin');
    assert.equal((await c.get('/admin/users', as('gina', 'dev'))).status, 403);
    assert.equal((await c.get('/admin/users', as('gina', 'admins'))).status, 200);
    const page = await c.get('/admin/audit', as('gina', 'admins'));
    assert.match(
      page.text,
      /<td data-label="Who"><bdi>auth proxy<\/bdi><\/td>/,
      'the proxy is named as who did it, with no user id',
    );
    const audit = (await auditEntries(proxied.dataDir)).filter((e) => e['target'] === 'user:gina');
    assert.deepEqual(
      audit.map((e) => [e['action'], e['user'], e['ip']]),
      [
        ['user.add', 'auth proxy', '127.0.0.1'],
        ['user.unadmin', 'auth proxy', '127.0.0.1'],
        ['user.admin', 'auth proxy', '127.0.0.1'],
      ],
    );
  });

  test('a disabled user stays refused, and their session ends', async () => {
    const c = new WebClient(proxied);
    assert.equal(signedInAs(await c.get('/my', as('dora'))), 'dora');
    await cli(proxied.dataDir, ['user', 'disable', 'dora']);
    const r = await c.get('/my', as('dora'));
    assert.equal(r.status, 403);
    assert.match(r.text, /This account is disabled/);
    assert.equal(await sessionsOf(proxied, 'dora'), 0);
  });

  test("Log out ends the session and goes on to AUTH_PROXY_LOGOUT_URL, the proxy's own sign-out", async () => {
    const c = new WebClient(proxied);
    await c.get('/my', as('alice'));
    const r = await c.request('POST', '/logout', { _csrf: c.csrf }, as('alice'));
    assert.equal(r.status, 200);
    assert.equal(r.headers['refresh'], `0; url=${LOGOUT}`);
    assert.ok(r.text.includes('href="https://auth.example.test/logout?rd=paste"'));
    assert.equal(signedInAs(r), undefined);
    assert.equal(await sessionsOf(proxied, 'alice'), 0);
    assert.match((await c.get('/my')).location ?? '', /^\/login/);
  });
});

describe('sign-in by a trusted proxy, without AUTH_PROXY_CREATE', () => {
  test('an unknown user is refused and not created; a known one signs in; Log out may go to a path', async () => {
    const s = await startServer({
      env: { AUTH_PROXY_HEADER: 'X-Auth-User', AUTH_PROXY_TRUSTED: '127.0.0.1', AUTH_PROXY_LOGOUT_URL: '/bye' },
    });
    await cli(s.dataDir, ['user', 'add', 'alice', '--password-stdin'], 'password123');
    const stranger = await new WebClient(s).get('/', { 'x-auth-user': 'stranger' });
    assert.equal(stranger.status, 403);
    assert.match(stranger.text, /There is no account &quot;stranger&quot; here|There is no account "stranger" here/);
    assert.deepEqual(
      (await storedAccounts(s.dataDir)).users.map((u) => u.name),
      ['alice'],
    );
    const c = new WebClient(s);
    assert.equal(signedInAs(await c.get('/', { 'x-auth-user': 'ALICE' })), 'alice', 'names ignore case, as logins do');
    assert.equal(signedInAs(await c.get('/', { 'remote-user': 'root' })), 'alice', 'only the configured header counts');
    const out = await c.request('POST', '/logout', { _csrf: c.csrf });
    assert.equal(out.status, 303);
    assert.equal(out.location, '/bye');
  });

  test('300 cookieless requests from the proxy leave the user MAX_SESSIONS_PER_USER sessions, the newest, each usable', async () => {
    await cli(proxied.dataDir, ['user', 'add', 'dave']);
    const cookies: string[] = [];
    // Ten at a time, as a script behind the proxy that never keeps its cookie would send them.
    for (let round = 0; round < 30; round++) {
      const answers = await Promise.all(
        Array.from({ length: 10 }, () => new WebClient(proxied).get('/my', as('dave'))),
      );
      for (const r of answers) {
        assert.equal(r.status, 200, r.text);
        assert.equal(setsSession(r), true);
        const set = [r.headers['set-cookie'] ?? []].flat() as string[];
        cookies.push((set.find((c) => c.startsWith('paste_sid=')) ?? '').split(';')[0] ?? '');
      }
    }
    assert.equal(await sessionsOf(proxied, 'dave'), MAX_SESSIONS_PER_USER);
    // The last one made is kept, and its page needs no new sign-in.
    const last = await req(proxied, 'GET', '/my', { headers: { cookie: cookies.at(-1) ?? '' } });
    assert.equal(last.status, 200);
    assert.equal(signedInAs(last as WebRes), 'dave');
    // One of the first is gone: without the header it is no session at all.
    const first = await req(proxied, 'GET', '/my', { headers: { cookie: cookies[0] ?? '' } });
    assert.equal(first.status, 302);
  });
});
