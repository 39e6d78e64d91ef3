import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { cleanup, startServer, type TestServer } from '../helpers/server.ts';
import { everythingStored, storedBucketKeys } from '../helpers/stored.ts';
import { register, WebClient } from '../helpers/web-client.ts';

const servers: TestServer[] = [];
async function server(env: Record<string, string>): Promise<TestServer> {
  const s = await startServer({ env: { OPEN_REGISTRATION: '1', ...env } });
  servers.push(s);
  return s;
}
after(async () => {
  await Promise.all(servers.map((s) => s.stop()));
  await Promise.all(servers.map((s) => cleanup(s.dataDir)));
});

/** The rate-limit buckets as persisted (written on a clean stop). */
async function bucketKeys(s: TestServer): Promise<string[]> {
  await s.stop();
  return storedBucketKeys(s.dataDir);
}

async function loginForm(s: TestServer): Promise<WebClient> {
  const c = new WebClient(s);
  await c.get('/login');
  return c;
}

describe('the per-account login limit', () => {
  let s: TestServer;
  before(async () => {
    s = await server({ AUTH_FAIL_LIMIT_PER_MINUTE: '1000' });
    for (const name of ['owner', 'victim', 'burst']) await register(new WebClient(s), name, `${name}-password`);
  });

  test('successful logins spend nothing: the owner may log in more than ten times a minute', async () => {
    for (let i = 0; i < 12; i++) {
      const c = await loginForm(s);
      assert.equal(
        (await c.post('/login', { name: 'owner', password: 'owner-password' })).status,
        303,
        `login ${i + 1}`,
      );
    }
    // And the failures budget is still whole afterwards.
    const c = await loginForm(s);
    for (let i = 0; i < 10; i++)
      assert.equal((await c.post('/login', { name: 'owner', password: `wrong-${i}` })).status, 401);
    assert.equal((await c.post('/login', { name: 'owner', password: 'owner-password' })).status, 429);
  });

  test('ten failures lock the account for a while, whoever guesses; other accounts are unaffected', async () => {
    const guesser = await loginForm(s);
    for (let i = 0; i < 10; i++)
      assert.equal((await guesser.post('/login', { name: 'VICTIM', password: `guess-${i}` })).status, 401);
    const owner = await loginForm(s);
    const r = await owner.post('/login', { name: 'victim', password: 'victim-password' });
    assert.equal(r.status, 429, 'the name is matched in any case');
    assert.match(String(r.headers['retry-after']), /^\d+$/);
  });

  test('a burst of concurrent guesses cannot overrun the budget before failures are counted', async () => {
    const c = await loginForm(s);
    const results = await Promise.all(
      Array.from({ length: 25 }, (_, i) => c.post('/login', { name: 'burst', password: `guess-${i}-x` })),
    );
    const statuses = results.map((r) => r.status);
    assert.equal(statuses.filter((x) => x === 401).length, 10, statuses.join(','));
    assert.equal(statuses.filter((x) => x === 429).length, 15);
  });
});

describe('login names and the rate-limit file', () => {
  test('a name is stored only as a keyed hash; an over-long one is refused before any bucket', async () => {
    const s = await server({ AUTH_FAIL_LIMIT_PER_MINUTE: '1000' });
    const c = await loginForm(s);
    const typo = 'Hunter2-my-password';
    assert.equal((await c.post('/login', { name: typo, password: 'whatever-1' })).status, 401);
    const huge = 'x'.repeat(200_000);
    const r = await c.post('/login', { name: huge, password: 'whatever-1' });
    assert.equal(r.status, 401);
    assert.match(r.text, /Wrong user name or password/);
    assert.ok(r.text.length < 20_000, 'the name is not echoed back');
    assert.equal((await c.post('/login', { name: 'y'.repeat(33), password: 'whatever-1' })).status, 401);
    assert.ok(!(await everythingStored(s.dataDir)).includes(typo), 'not even between saves');
    const keys = await bucketKeys(s);
    const users = keys.filter((k) => k.startsWith('login-user:'));
    assert.equal(users.length, 1, keys.join('\n'));
    assert.match(users[0] ?? '', /^login-user:[A-Za-z0-9_-]{22}$/);
    assert.ok(!keys.some((k) => k.toLowerCase().includes('hunter2')));
  });

  test('the per-address limit counts failures only, too', async () => {
    const s = await server({ AUTH_FAIL_LIMIT_PER_MINUTE: '3' });
    await register(new WebClient(s), 'regular', 'regular-password');
    for (let i = 0; i < 5; i++)
      assert.equal(
        (await (await loginForm(s)).post('/login', { name: 'regular', password: 'regular-password' })).status,
        303,
      );
    const c = await loginForm(s);
    for (const name of ['a', 'b', 'c'])
      assert.equal((await c.post('/login', { name, password: 'password123' })).status, 401);
    assert.equal((await c.post('/login', { name: 'regular', password: 'regular-password' })).status, 429);
  });
});
