import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type AppServer, req } from '../helpers/server.ts';
import { register, WebClient } from '../helpers/web-client.ts';
import { seenByAll, startInstances } from '../helpers/instances.ts';

// Accounts and sessions across three instances on one database (README, Running several instances).

const idOf = (secret: string): string => secret.slice(4, 12);
const create = (s: AppServer, token: string) =>
  req(s, 'POST', '/api/v1/paste_create.php', { token, body: { content: 'x' } });

/** A browser whose requests go to whichever instance `to` names now, with one cookie jar. */
function browser(first: AppServer): { client: WebClient; to(s: AppServer): WebClient } {
  const target = { port: first.port };
  const client = new WebClient(target);
  return {
    client,
    to(s) {
      target.port = s.port;
      return client;
    },
  };
}

test('revoking, disabling, changing scopes or role, on one instance or by the CLI, is honoured by every instance within 1 s', async (t) => {
  const set = await startInstances(t, 3, { env: { OPEN_REGISTRATION: '1' } });
  const [a, b, c] = set.all as [AppServer, AppServer, AppServer];
  const root = browser(a);
  await register(root.client, 'root');
  const bob = browser(b);
  await register(bob.client, 'bob');
  const alice = await set.token({ user: 'alice', scopes: 'read,write' });
  const bobs = await set.token({ user: 'bob', scopes: 'read' });
  for (const s of set.all) assert.equal((await create(s, alice)).status, 200);
  const times: Record<string, number> = {};

  // The admin narrows alice's token to `read` on instance a: b and c refuse her create.
  await root.to(a).get('/admin/tokens');
  assert.equal((await root.client.post('/admin/tokens', { id: idOf(alice), scope_read: '1', rate: '0' })).status, 303);
  times['scopes'] = await seenByAll(set.all, a, async (s) => (await create(s, alice)).status === 403, 'the scopes');

  // The CLI revokes it: every instance answers 401.
  await set.cli(['token', 'revoke', idOf(alice)]);
  times['revoke'] = await seenByAll(set.all, null, async (s) => (await create(s, alice)).status === 401, 'the revoke');

  // The CLI makes bob an admin; his session on every instance opens the admin pages.
  await set.cli(['user', 'admin', 'bob']);
  times['role (CLI)'] = await seenByAll(
    set.all,
    null,
    async (s) => (await bob.to(s).get('/admin/users')).status === 200,
    'the role',
  );
  // The admin takes it back on instance c.
  await root.to(c).get('/admin/users');
  assert.equal((await root.client.post('/admin/users', { action: 'unadmin', name: 'bob' })).status, 303);
  times['role (web)'] = await seenByAll(
    set.all,
    c,
    async (s) => (await bob.to(s).get('/admin/users')).status === 403,
    'the role taken back',
  );

  // Disabled on instance b: his token and his session stop everywhere.
  const read = (s: AppServer) => req(s, 'GET', '/api/v1/paste.php?hash=AAAAAAAAAA', { token: bobs });
  for (const s of set.all) assert.equal((await read(s)).status, 404);
  await root.to(b).get('/admin/users');
  assert.equal((await root.client.post('/admin/users', { action: 'disable', name: 'bob' })).status, 303);
  times['disable'] = await seenByAll(set.all, b, async (s) => (await read(s)).status === 401, 'the disable');
  for (const s of set.all) assert.equal((await bob.to(s).get('/my')).status, 302, 'his session is over');
  t.diagnostic(
    `seen by every instance after (ms): ${JSON.stringify(times, (_, v) => (typeof v === 'number' ? Math.round(v) : v))}`,
  );
  for (const [what, ms] of Object.entries(times)) assert.ok(ms < 1_000, `${what}: ${ms} ms`);
});

const secretOf = (text: string): string =>
  /id="new-secret" class="copyable" value="(pst_[A-Za-z0-9_]+)"/.exec(text)?.[1] ?? '';

test('a session made on one instance works on every other, with its CSRF token, unlock grants and once-shown secrets; logging out ends it on all', async (t) => {
  const set = await startInstances(t, 3, { env: { OPEN_REGISTRATION: '1' } });
  const [a, b, c] = set.all as [AppServer, AppServer, AppServer];
  const root = browser(a);
  await register(root.client, 'root');
  for (const s of set.all) assert.match((await root.to(s).get('/my')).text, /root/);

  // A form loaded from a, posted to b: the CSRF token is the session's.
  await root.to(a).get('/');
  const posted = await root.to(b).post('/', {
    content: 'guarded',
    password: 'pw',
    language: 'auto',
    privacy: 'public',
    expiry: 'never',
    highlight: '1',
  });
  assert.equal(posted.status, 303, posted.text);
  const hash = /^\/p\/([A-Za-z0-9]{10})$/.exec(posted.location ?? '')?.[1] ?? '';

  // An unlock grant given by c opens the paste on a and b.
  const anon = browser(c);
  await anon.client.get(`/p/${hash}`);
  assert.equal((await anon.client.post(`/p/${hash}`, { password: 'pw' })).status, 200);
  assert.ok(
    [...anon.client.cookies.keys()].some((k) => k.includes('unlock')),
    'a grant was given',
  );
  for (const s of set.all) assert.match((await anon.to(s).get(`/p/${hash}`)).text, /guarded/);

  // A new token's secret, made on a, is shown by b once; c shows it no more.
  await root.to(a).get('/api_keys.php');
  const made = await root.client.post('/api_keys.php', {
    action: 'create',
    label: 'ci',
    scope_read: '1',
    rate: '0',
    expires: '0',
  });
  assert.equal(made.status, 303, made.text);
  const secret = secretOf((await root.to(b).get(made.location ?? '')).text);
  assert.match(secret, /^pst_/);
  assert.equal(secretOf((await root.to(c).get(made.location ?? '')).text), '');
  assert.equal((await req(c, 'GET', '/api/v1/paste.php?hash=AAAAAAAAAA', { token: secret })).status, 404);

  // A new user's temporary password, made on b, is shown by c.
  await root.to(b).get('/admin/users');
  const added = await root.client.post('/admin/users', { action: 'add', name: 'carol' });
  assert.equal(added.status, 303, added.text);
  const page = await root.to(c).get((added.location ?? '').split('#')[0] ?? '');
  assert.match(page.text, /id="temporary-password" class="copyable" value="[A-Za-z0-9]{16}"/);

  // Logging out on c ends the session on a and b too.
  await root.to(c).get('/');
  assert.equal((await root.client.post('/logout', {})).status, 303);
  for (const s of set.all) assert.equal((await root.to(s).get('/my')).status, 302, `port ${s.port}`);
});
