import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { cli, makeToken, req, startServer, type TestServer } from '../helpers/server.ts';
import { auditEntries, everythingStored, storedAccounts } from '../helpers/stored.ts';
import { login, registerAll, WebClient, type WebRes } from '../helpers/web-client.ts';

let s: TestServer;
let admin: WebClient;
let bob: WebClient;

before(async () => {
  s = await startServer({ env: { OPEN_REGISTRATION: '1' } });
  [admin, bob] = await registerAll(s, 'root', 'bob');
});

/** The audit log's lines, oldest first, from every day's file. */
const auditLines = (): Promise<Record<string, unknown>[]> => auditEntries(s.dataDir);

/** A login that may be refused: the page's answer as it is. */
async function tryLogin(name: string, password = 'password123'): Promise<WebRes> {
  const c = new WebClient(s);
  await c.get('/login');
  return c.post('/login', { name, password, next: '/' });
}

const lastAudit = async (): Promise<Record<string, unknown>> => (await auditLines()).at(-1) as Record<string, unknown>;

describe('Users page', () => {
  test('is for admins only, and lists every user with last login, tokens and pastes', async () => {
    assert.equal((await bob.get('/admin/users')).status, 403);
    assert.equal((await bob.get('/admin/audit')).status, 403);
    assert.equal((await new WebClient(s).get('/admin/users')).status, 302);
    const token = await makeToken(s.dataDir, { user: 'bob', scopes: 'read,write' });
    for (let i = 0; i < 3; i++)
      assert.equal(
        (await req(s, 'POST', '/api/v1/paste_create.php', { token, body: { content: `p${i}` } })).status,
        200,
      );
    const r = await admin.get('/admin/users');
    assert.equal(r.status, 200);
    const row = /<tr id="user-bob">([\s\S]*?)<\/tr>/.exec(r.text)?.[1] ?? '';
    assert.match(row, /data-label="Tokens" class="num"><a href="\/admin\/tokens\?q=bob">1<\/a>/);
    assert.match(row, /data-label="Pastes" class="num">3</);
    // Registering logs the new user in; a user the CLI added has never logged in, until they do.
    assert.match(row, /data-label="Last login"><time/);
    await cli(s.dataDir, ['user', 'add', 'quinn', '--password-stdin'], 'password123');
    const quinn = (): Promise<string> =>
      admin.get('/admin/users').then((p) => /<tr id="user-quinn">([\s\S]*?)<\/tr>/.exec(p.text)?.[1] ?? '');
    assert.match(await quinn(), /data-label="Last login"><span class="muted">never/);
    await login(new WebClient(s), 'quinn');
    assert.match(await quinn(), /data-label="Last login"><time/);
    assert.match(r.text, /<tr id="user-root">[\s\S]*?badge-warn">admin[\s\S]*?\(you\)/);
  });

  test('adds a user with a temporary password shown once, which logs in', async () => {
    await admin.get('/admin/users');
    const r = await admin.post('/admin/users', { action: 'add', name: 'carol' });
    assert.equal(r.status, 303);
    const page = await admin.get((r.location ?? '').split('#')[0] ?? '');
    const password = /id="temporary-password" class="copyable" value="([A-Za-z0-9]{16})"/.exec(page.text)?.[1];
    assert.ok(password !== undefined, 'the password is on the page');
    const reload = await admin.get((r.location ?? '').split('#')[0] ?? '');
    assert.equal(reload.text.includes(password), false, 'and only once');
    assert.match(reload.text, /shown once and is not kept/);
    const carol = new WebClient(s);
    const done = await login(carol, 'carol', password);
    assert.equal(done.status, 303);
    assert.equal((await carol.get('/my')).location, '/account', 'a temporary password is changed first');
    assert.equal((await everythingStored(s.dataDir)).includes(password), false, 'only a hash is stored');
    const entry = await lastAudit();
    assert.equal(entry['action'], 'user.add');
    assert.equal(entry['target'], 'user:carol');
    assert.equal(entry['via'], 'web');
    assert.equal(entry['user'], 'root');
    assert.equal(entry['ip'], '127.0.0.1');
    assert.deepEqual(entry['after'], { id: 4, name: 'carol', role: 'user', disabled: false });
    assert.equal(JSON.stringify(await auditLines()).includes(password), false, 'no secret in the audit log');
    // A taken name and a bad one are refused with the form kept.
    assert.equal((await admin.post('/admin/users', { action: 'add', name: 'CAROL' })).status, 400);
    const bad = await admin.post('/admin/users', { action: 'add', name: '-x' });
    assert.equal(bad.status, 400);
    assert.match(bad.text, /user name must be/);
  });

  test('disabling a user refuses its token on the very next request and ends its sessions; enabling brings both back', async () => {
    await cli(s.dataDir, ['user', 'add', 'dave', '--password-stdin'], 'password123');
    const token = await makeToken(s.dataDir, { user: 'dave', scopes: 'read,write' });
    const dave = new WebClient(s);
    await login(dave, 'dave');
    assert.equal((await dave.get('/my')).status, 200);
    assert.equal(
      (await req(s, 'POST', '/api/v1/paste_create.php', { token, body: { content: 'before' } })).status,
      200,
    );
    await admin.get('/admin/users');
    const r = await admin.post('/admin/users', { action: 'disable', name: 'dave' });
    assert.equal(r.status, 303);
    assert.match((await admin.get((r.location ?? '').split('#')[0] ?? '')).text, /dave is disabled/);
    const refused = await req(s, 'POST', '/api/v1/paste_create.php', { token, body: { content: 'after' } });
    assert.equal(refused.status, 401);
    assert.equal(refused.json?.['code'], 'account_disabled');
    const gone = await dave.get('/my');
    assert.equal(gone.status, 302, 'the session ended');
    assert.equal(dave.cookies.size === 0 || ![...dave.cookies.keys()].some((k) => k.includes('session')), true);
    const again = await tryLogin('dave');
    assert.equal(again.status, 403);
    assert.match(again.text, /This account is disabled/);
    const wrong = await tryLogin('dave', 'not the password');
    assert.equal(wrong.status, 401, 'a wrong password does not learn the account is disabled');
    assert.match(
      (await admin.get('/admin/users')).text,
      /<tr id="user-dave">[\s\S]*?<span class="badge">disabled<\/span>/,
    );
    assert.equal((await lastAudit())['action'], 'user.disable');
    assert.equal((await admin.post('/admin/users', { action: 'enable', name: 'dave' })).status, 303);
    assert.equal((await req(s, 'POST', '/api/v1/paste_create.php', { token, body: { content: 'again' } })).status, 200);
    assert.equal((await login(new WebClient(s), 'dave')).status, 303);
    const entry = await lastAudit();
    assert.equal(entry['action'], 'user.enable');
    assert.deepEqual(
      [
        (entry['before'] as Record<string, unknown>)['disabled'],
        (entry['after'] as Record<string, unknown>)['disabled'],
      ],
      [true, false],
    );
  });

  test('makes and unmakes admins; the last enabled admin can be neither disabled nor demoted', async () => {
    await admin.get('/admin/users');
    for (const act of ['disable', 'unadmin']) {
      const r = await admin.post('/admin/users', { action: act, name: 'root' });
      assert.equal(r.status, 409, act);
      assert.match(r.text, /only enabled admin/);
    }
    assert.equal((await admin.post('/admin/users', { action: 'admin', name: 'bob' })).status, 303);
    assert.equal((await bob.get('/admin/users')).status, 200, 'bob is an admin now');
    const bobAdminToken = await makeToken(s.dataDir, { user: 'bob', scopes: 'read,write,admin' });
    // Two admins: bob may demote root... but root demotes bob back instead.
    assert.equal((await admin.post('/admin/users', { action: 'unadmin', name: 'bob' })).status, 303);
    assert.equal((await bob.get('/admin/users')).status, 403);
    const accounts = await storedAccounts(s.dataDir);
    assert.deepEqual(
      accounts.tokens.find((t) => t.id === bobAdminToken.slice(4, 12))?.scopes,
      ['read', 'write'],
      'a demoted user’s tokens lose the admin scope',
    );
    assert.deepEqual(
      (await auditLines())
        .map((e) => e['action'])
        .filter((a) => String(a).startsWith('user.'))
        .slice(-2),
      ['user.admin', 'user.unadmin'],
    );
    // A disabled admin does not count: with root the only enabled admin, it stays protected.
    await cli(s.dataDir, ['user', 'add', 'eve', '--admin']);
    await cli(s.dataDir, ['user', 'disable', 'eve']);
    assert.equal((await admin.post('/admin/users', { action: 'disable', name: 'root' })).status, 409);
    assert.equal((await admin.post('/admin/users', { action: 'dance', name: 'eve' })).status, 400);
    assert.equal((await admin.post('/admin/users', { action: 'disable', name: 'nobody' })).status, 403);
  });
});

describe('Audit page', () => {
  test('shows admin actions from the web and the CLI, newest first, escaped, paged', async () => {
    await cli(s.dataDir, ['token', 'create', '--user', 'bob', '--scopes', 'read', '--label', '<b>x</b>']);
    const r = await admin.get('/admin/audit');
    assert.equal(r.status, 200);
    const rows = [...r.text.matchAll(/<td data-label="Action" class="mono">([^<]+)<\/td>/g)].map((m) => m[1]);
    assert.equal(rows[0], 'token.create', 'newest first');
    assert.ok(rows.includes('user.disable') && rows.includes('user.add'));
    assert.match(r.text, /<span class="badge">CLI<\/span>/);
    assert.equal(r.text.includes('<b>x</b>'), false);
    assert.match(r.text, /&quot;label&quot;:&quot;&lt;b&gt;x&lt;\/b&gt;&quot;/);
    const entries = await auditLines();
    for (let i = 0; i < 60; i++) await cli(s.dataDir, ['user', 'admin', 'bob', ...(i % 2 === 0 ? [] : ['--remove'])]);
    const first = await admin.get('/admin/audit');
    assert.match(first.text, /href="\/admin\/audit\?page=2" rel="next"/);
    const second = await admin.get('/admin/audit?page=2');
    const count = (t: string): number => [...t.matchAll(/data-label="Action"/g)].length;
    assert.equal(count(first.text), 50);
    assert.equal(count(second.text), entries.length + 60 - 50);
    assert.doesNotMatch(second.text, /rel="next"/);
    assert.equal((await admin.get('/admin/audit?page=abc')).status, 200);
  });
});

describe('admins acting on pastes', () => {
  test("an admin's edit or delete of someone else's paste is audited (web and API); an owner's own is not", async () => {
    const bobToken = await makeToken(s.dataDir, { user: 'bob', scopes: 'read,write' });
    const rootToken = await makeToken(s.dataDir, { user: 'root', scopes: 'read,write,admin' });
    const make = async (content: string): Promise<string> =>
      (await req(s, 'POST', '/api/v1/paste_create.php', { token: bobToken, body: { content, title: 'bob’s' } })).json?.[
        'hash'
      ] as string;
    const a = await make('secret content one');
    const b = await make('secret content two');
    const count = async (): Promise<number> => (await auditLines()).length;
    const n = await count();
    assert.equal(
      (await req(s, 'POST', '/api/v1/paste_edit.php', { token: bobToken, body: { hash: a, title: 'own edit' } }))
        .status,
      200,
    );
    assert.equal(await count(), n, 'an owner editing their own paste is no admin action');
    await admin.get(`/p/${a}/edit`);
    assert.equal(
      (
        await admin.post(`/p/${a}/edit`, {
          title: 'moderated',
          content: 'secret content one',
          language: 'text',
          privacy: 'unlisted',
          expiry: 'keep',
        })
      ).status,
      303,
    );
    const edited = await lastAudit();
    assert.deepEqual(
      [edited['action'], edited['target'], edited['via'], edited['user']],
      ['paste.edit', `paste:${a}`, 'web', 'root'],
    );
    assert.deepEqual(
      [
        (edited['before'] as Record<string, unknown>)['title'],
        (edited['after'] as Record<string, unknown>)['title'],
        (edited['after'] as Record<string, unknown>)['privacy'],
      ],
      ['own edit', 'moderated', 'unlisted'],
    );
    // The length of the text in characters: quotes, escapes and a surrogate pair counted as the reader sees them.
    assert.equal(
      (await req(s, 'POST', '/api/v1/paste_edit.php', { token: rootToken, body: { hash: a, content: 'a\nb"cé😀' } }))
        .status,
      200,
    );
    const counted = await lastAudit();
    assert.deepEqual(
      [
        (counted['before'] as Record<string, unknown>)['content_chars'],
        (counted['after'] as Record<string, unknown>)['content_chars'],
      ],
      [18, 7],
    );
    assert.equal(
      (await req(s, 'POST', '/api/v1/paste_delete.php', { token: rootToken, body: { hash: b } })).status,
      200,
    );
    const deleted = await lastAudit();
    assert.deepEqual(
      [deleted['action'], deleted['target'], deleted['via'], deleted['user'], deleted['after']],
      ['paste.delete', `paste:${b}`, 'api', 'root', null],
    );
    assert.equal(
      JSON.stringify(await auditLines()).includes('secret content'),
      false,
      'no paste text in the audit log',
    );
    assert.match(
      (await admin.get('/admin/audit')).text,
      /<span class="badge">API<\/span> <bdi>root<\/bdi>|<span class="badge">API<\/span> root/,
    );
  });
});

describe('API Tokens page', () => {
  test('searches by user and label, pages 25 at a time, and counts each token’s requests in the last 24 hours', async () => {
    const busy = await makeToken(s.dataDir, { user: 'bob', scopes: 'read' });
    for (let i = 0; i < 7; i++) await req(s, 'GET', '/api/v1/paste.php?hash=AAAAAAAAAA', { token: busy });
    const id = busy.slice(4, 12);
    const found = await admin.get('/admin/tokens?q=BOB');
    assert.match(found.text, new RegExp(`<tr id="token-${id}">[\\s\\S]*?data-requests-24h="7"`));
    assert.doesNotMatch(
      found.text,
      /<span class="title-cell">[^<]*<\/span><br><span class="mono muted">[^<]*<\/span><\/td>\n<td data-label="User"><span>root/,
    );
    await cli(s.dataDir, ['user', 'add', 'many']);
    for (let i = 0; i < 30; i++)
      await cli(s.dataDir, ['token', 'create', '--user', 'many', '--scopes', 'read', '--label', `batch ${i}`]);
    const label = await admin.get('/admin/tokens?q=batch+2');
    assert.equal([...label.text.matchAll(/<tr id="token-/g)].length, 11, 'batch 2 and batch 20-29');
    const p1 = await admin.get('/admin/tokens?q=many');
    assert.equal([...p1.text.matchAll(/<tr id="token-/g)].length, 25);
    assert.match(p1.text, /Page 1 of 2/);
    assert.match(p1.text, /href="\/admin\/tokens\?q=many&amp;page=2" rel="next"/);
    const p2 = await admin.get('/admin/tokens?q=many&page=2');
    assert.equal([...p2.text.matchAll(/<tr id="token-/g)].length, 5);
    assert.match((await admin.get('/admin/tokens?q=nothing-like-this')).text, /No token matches/);
  });

  test('an admin’s token change and revoke are audited with before and after, never a hash', async () => {
    const token = await makeToken(s.dataDir, { user: 'bob', scopes: 'read' });
    const id = token.slice(4, 12);
    await admin.get('/admin/tokens');
    assert.equal((await admin.post('/admin/tokens', { id, scope_read: '1', scope_write: '1', rate: '9' })).status, 303);
    const update = await lastAudit();
    assert.equal(update['action'], 'token.update');
    assert.equal((update['before'] as Record<string, unknown>)['rate_limit_per_minute'], 0);
    assert.equal((update['after'] as Record<string, unknown>)['rate_limit_per_minute'], 9);
    await admin.get('/admin/tokens');
    assert.equal((await admin.post('/admin/tokens', { action: 'revoke', id })).status, 303);
    const revoke = await lastAudit();
    assert.deepEqual([revoke['action'], revoke['target'], revoke['after']], ['token.revoke', `token:${id}`, null]);
    const accounts = await storedAccounts(s.dataDir);
    const all = JSON.stringify(await auditLines());
    for (const t of accounts.tokens) assert.equal(all.includes(t.hash), false);
    assert.equal(all.includes(token), false);
  });
});
