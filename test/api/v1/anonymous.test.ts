import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { apiLogLines, everythingStored, storedPaste } from '../../helpers/stored.ts';
import { cli, makeToken, req, startServer, type AppServer } from '../../helpers/server.ts';
import { WebClient } from '../../helpers/web-client.ts';

let off: AppServer;
let on: AppServer;
let token: string;
let adminToken: string;

before(async () => {
  off = await startServer();
  on = await startServer({
    env: { ANONYMOUS_PASTES: '1', ANONYMOUS_RATE_PER_MINUTE: '100', ANONYMOUS_MAX_BYTES: '100' },
  });
  token = await makeToken(on.dataDir, { user: 'alice' });
  adminToken = await makeToken(on.dataDir, { user: 'root', admin: true, scopes: 'read,write,admin' });
});

const create = (s: AppServer, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  req(s, 'POST', '/api/v1/paste_create.php', { body, headers: { 'x-forwarded-for': '', ...headers } });

describe('anonymous pastes, off by default', () => {
  test('paste_create.php without a token answers 401 as it always did', async () => {
    const r = await create(off, { content: 'hello' });
    assert.equal(r.status, 401);
    assert.equal(r.json.code, 'unauthorized');
  });
});

describe('anonymous pastes with ANONYMOUS_PASTES=1', () => {
  test('a create without a token makes a paste shown as "anonymous", with a delete link', async () => {
    const r = await create(on, { content: 'anonymous hello', privacy: 'unlisted' });
    assert.equal(r.status, 200, r.text);
    const hash = r.json['hash'] as string;
    assert.match(r.json['delete_url'] as string, new RegExp(`^${on.url}/p/${hash}/delete/[A-Za-z0-9]{32}$`));
    assert.equal(r.headers['x-ratelimit-limit'], '100');
    const got = await req(on, 'GET', `/api/v1/paste.php?hash=${hash}`, { token });
    const paste = got.json['paste'] as Record<string, unknown>;
    assert.deepEqual(paste['owner'], { id: 0, display_name: 'anonymous' });
    assert.equal(paste['privacy'], 'unlisted');
  });

  test('an anonymous paste expires within ANONYMOUS_MAX_EXPIRY (1w) when it names no expiry', async () => {
    const r = await create(on, { content: 'expires' });
    const got = await req(on, 'GET', `/api/v1/paste.php?hash=${r.json['hash']}`, { token });
    const paste = got.json['paste'] as Record<string, unknown>;
    const at = Date.parse(`${paste['expire_at'] as string}Z`);
    assert.ok(Math.abs(at - (on.clock.now() + 7 * 86_400_000)) < 5_000, String(paste['expire_at']));
  });

  test('the limits hold: no private, no expiry past the longest, never `never`, no more than ANONYMOUS_MAX_BYTES', async () => {
    const c = { 'x-forwarded-for': '' };
    const priv = await create(on, { content: 'x', privacy: 'private' }, c);
    assert.equal(priv.status, 400, priv.text);
    assert.match(priv.json.error ?? '', /privacy/);
    for (const expiry of ['never', '1m']) {
      const r = await create(on, { content: 'x', expiry }, c);
      assert.equal(r.status, 400, r.text);
      assert.match(r.json.error ?? '', /expiry/);
    }
    const big = await create(on, { content: 'x'.repeat(101) }, c);
    assert.equal(big.status, 413, big.text);
  });

  test('a token, when sent, is a token: its user owns the paste, and a bad one is 401, not anonymous', async () => {
    const r = await req(on, 'POST', '/api/v1/paste_create.php', { token, body: { content: 'mine' } });
    assert.equal(r.status, 200);
    assert.equal(r.json['delete_url'], undefined);
    const stored = await storedPaste(on.dataDir, r.json['hash'] as string);
    assert.notEqual(stored?.['owner_id'], 0);
    const bad = await req(on, 'POST', '/api/v1/paste_create.php', { token: 'pst_nope', body: { content: 'x' } });
    assert.equal(bad.status, 401);
  });

  test('only create is open: reading, editing and deleting without a token stay 401', async () => {
    const r = await create(on, { content: 'read me' });
    const hash = r.json['hash'] as string;
    assert.equal((await req(on, 'GET', `/api/v1/paste.php?hash=${hash}`)).status, 401);
    assert.equal((await req(on, 'POST', '/api/v1/paste_delete.php', { body: { hash } })).status, 401);
    assert.equal((await req(on, 'POST', '/api/v1/paste_edit.php', { body: { hash, content: 'y' } })).status, 401);
  });

  test('the delete key is stored only as a digest, and its link deletes the paste without an account', async () => {
    const r = await create(on, { content: 'delete me' });
    const hash = r.json['hash'] as string;
    const url = new URL(r.json['delete_url'] as string);
    const key = url.pathname.split('/').pop() as string;
    const stored = await storedPaste(on.dataDir, hash);
    assert.match(String(stored?.['delete_key']), /^[0-9a-f]{64}$/);
    assert.ok(!(await everythingStored(on.dataDir)).includes(key), 'the key itself is stored nowhere');

    const visitor = new WebClient(on);
    const wrong = `/p/${hash}/delete/${'A'.repeat(32)}`;
    assert.equal((await visitor.get(wrong)).status, 200, 'the page asks first, whatever the key');
    assert.equal((await visitor.post(wrong, {})).status, 404);
    assert.equal((await req(on, 'GET', `/api/v1/paste.php?hash=${hash}`, { token })).status, 200);

    const page = await visitor.get(url.pathname);
    assert.equal(page.status, 200);
    assert.match(page.text, /Delete this paste\?/);
    assert.equal(
      (await req(on, 'GET', `/api/v1/paste.php?hash=${hash}`, { token })).status,
      200,
      'GET deletes nothing',
    );
    const done = await visitor.post(url.pathname, {});
    assert.equal(done.status, 200, done.text);
    assert.equal((await req(on, 'GET', `/api/v1/paste.php?hash=${hash}`, { token })).status, 404);
    assert.equal((await visitor.post(url.pathname, {})).status, 404, 'a second use finds nothing');
  });

  test('admins delete an anonymous paste like any other; a user does not', async () => {
    const r = await create(on, { content: 'moderate me' });
    const hash = r.json['hash'] as string;
    const mine = await req(on, 'POST', '/api/v1/paste_delete.php', { token, body: { hash } });
    assert.equal(mine.status, 403);
    const admin = await req(on, 'POST', '/api/v1/paste_delete.php', { token: adminToken, body: { hash } });
    assert.equal(admin.status, 200, admin.text);
  });
});

describe('the anonymous rate limit', () => {
  test('ANONYMOUS_RATE_PER_MINUTE creates per client IP, then 429 with Retry-After; another IP has its own', async () => {
    const s = await startServer({ env: { ANONYMOUS_PASTES: '1', ANONYMOUS_RATE_PER_MINUTE: '2', TRUST_PROXY: '1' } });
    const from = (ip: string) => create(s, { content: 'x' }, { 'x-forwarded-for': ip });
    assert.equal((await from('192.0.2.1')).status, 200);
    const second = await from('192.0.2.1');
    assert.equal(second.status, 200);
    assert.equal(second.headers['x-ratelimit-remaining'], '0');
    const third = await from('192.0.2.1');
    assert.equal(third.status, 429);
    assert.equal(third.json['limit_per_minute'], 2);
    assert.match(String(third.headers['retry-after']), /^\d+$/);
    assert.equal((await from('198.51.100.7')).status, 200);
    // A token's requests do not spend the anonymous budget.
    const t = await makeToken(s.dataDir, { user: 'bob' });
    const withToken = await req(s, 'POST', '/api/v1/paste_create.php', {
      token: t,
      body: { content: 'x' },
      headers: { 'x-forwarded-for': '192.0.2.1' },
    });
    assert.equal(withToken.status, 200);
    // The log lines of anonymous creates name no token and no user.
    await s.stop();
    const anonymous = (await apiLogLines(s.dataDir)).filter((l) => l['ip'] !== undefined && l['token_id'] === null);
    assert.deepEqual(
      anonymous.map((l) => [l['status'], l['user_id']]),
      [
        [200, null],
        [200, null],
        [429, null],
        [200, null],
      ],
    );
  });
});

test('IPv6 clients share the anonymous budget of their /64 (IPV6_PREFIX_LENGTH), as the other per-IP budgets', async () => {
  const s = await startServer({ env: { ANONYMOUS_PASTES: '1', ANONYMOUS_RATE_PER_MINUTE: '1', TRUST_PROXY: '1' } });
  const from = (ip: string) => create(s, { content: 'x' }, { 'x-forwarded-for': ip });
  assert.equal((await from('2001:db8:1:2::1')).status, 200);
  assert.equal((await from('2001:db8:1:2::ffff')).status, 429, 'the same /64');
  assert.equal((await from('2001:db8:1:3::1')).status, 200, 'another /64');
});

describe('anonymous pastes across export and import', () => {
  test('an anonymous paste moves as one (owner null, its delete key as a digest): still anonymous, its link still works', async () => {
    const r = await create(on, { content: 'moving house' });
    const hash = r.json['hash'] as string;
    const link = new URL(r.json['delete_url'] as string).pathname;
    const line = (await cli(on.dataDir, ['export']))
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .find((l) => l['hash'] === hash);
    assert.ok(line !== undefined);
    assert.equal(line['owner'], null);
    assert.match(String(line['delete_key']), /^[0-9a-f]{64}$/);

    const target = await startServer({ env: { ANONYMOUS_PASTES: '1' } });
    const report = await cli(target.dataDir, ['import'], `${JSON.stringify(line)}\n`);
    assert.match(report, /imported 1\b/);
    assert.doesNotMatch(report, /user/i, 'no user is made for it');
    assert.equal((await storedPaste(target.dataDir, hash))?.['owner_id'], 0);
    const visitor = new WebClient(target);
    await visitor.get(link);
    assert.equal((await visitor.post(link, {})).status, 200);
    assert.equal(await storedPaste(target.dataDir, hash), null);

    // A user's line never brings a delete key along.
    const forged = { ...line, hash: 'Zz00000000', owner: 'mallory' };
    await cli(target.dataDir, ['import'], `${JSON.stringify(forged)}\n`);
    assert.equal((await storedPaste(target.dataDir, 'Zz00000000'))?.['delete_key'] ?? null, null);
  });
});
