import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { makeToken, req, startServer, type AppServer } from './helpers/server.ts';
import { storedPaste } from './helpers/stored.ts';
import { createViaForm, login, register, WebClient } from './helpers/web-client.ts';

/** What takes minutes or days of real time, on a clock the test moves: the app runs in this process. */
let s: AppServer;
let token: string;
const MIN = 60_000;
const DAY = 86_400_000;

before(async () => {
  s = await startServer({
    env: { SESSION_IDLE_DAYS: '2', OPEN_REGISTRATION: '1', AUTH_FAIL_LIMIT_PER_MINUTE: '1000' },
  });
  token = await makeToken(s.dataDir, { user: 'alice', rate: 2 });
});

const create = async (body: Record<string, unknown>, t = token): Promise<string> => {
  const r = await req(s, 'POST', '/api/v1/paste_create.php', { token: t, body });
  assert.equal(r.status, 200, r.text);
  return r.json['hash'] as string;
};

describe('expiry', () => {
  test('a paste answers until its expiry, then 410 "expired" on both sides; the sweep wipes it to a tombstone', async () => {
    const free = await makeToken(s.dataDir, { user: 'bob', rate: 0 });
    const hash = await create({ content: 'short lived secret', expiry: '10m' }, free);
    s.clock.advance(10 * MIN - 1000);
    assert.equal((await req(s, 'GET', `/api/v1/raw.php?hash=${hash}`, { token: free })).text, 'short lived secret');
    s.clock.advance(1000);
    const r = await req(s, 'GET', `/api/v1/paste.php?hash=${hash}`, { token: free });
    assert.equal(r.status, 410);
    assert.match(r.json.error as string, /expired/);
    assert.equal((await new WebClient(s).get(`/p/${hash}`)).status, 410);
    await s.upkeep();
    const stored = await storedPaste(s.dataDir, hash);
    assert.ok(stored, 'the tombstone stays');
    assert.doesNotMatch(JSON.stringify(stored), /short lived secret/);
    assert.equal(
      (await req(s, 'GET', `/api/v1/raw.php?hash=${hash}`, { token: free })).status,
      410,
      'still 410, not 404',
    );
  });
});

describe('rate-limit buckets', () => {
  test('refill continuously by the clock: a token of 2 a minute gets one more every 30 s', async () => {
    const path = '/api/v1/paste.php?hash=AAAAAAAAAA';
    assert.deepEqual(
      [(await req(s, 'GET', path, { token })).status, (await req(s, 'GET', path, { token })).status],
      [404, 404],
    );
    const refused = await req(s, 'GET', path, { token });
    assert.equal(refused.status, 429);
    assert.equal(refused.headers['retry-after'], '30');
    s.clock.advance(29_000);
    assert.equal((await req(s, 'GET', path, { token })).status, 429);
    s.clock.advance(1_000);
    const again = await req(s, 'GET', path, { token });
    assert.equal(again.status, 404);
    assert.equal(again.headers['x-ratelimit-remaining'], '0');
    s.clock.advance(10 * MIN);
    assert.equal(
      (await req(s, 'GET', path, { token })).headers['x-ratelimit-remaining'],
      '1',
      'never more than the capacity',
    );
  });

  test('a spent paste-password budget refills after a minute', async () => {
    const hash = await create(
      { content: 'locked', password: 'right-password' },
      await makeToken(s.dataDir, { user: 'carol', rate: 0 }),
    );
    const free = await makeToken(s.dataDir, { user: 'dan', rate: 0 });
    for (let i = 0; i < 10; i++)
      assert.equal((await req(s, 'GET', `/api/v1/raw.php?hash=${hash}&password=no-${i}`, { token: free })).status, 403);
    assert.equal(
      (await req(s, 'GET', `/api/v1/raw.php?hash=${hash}&password=right-password`, { token: free })).status,
      429,
    );
    s.clock.advance(6_000);
    assert.equal(
      (await req(s, 'GET', `/api/v1/raw.php?hash=${hash}&password=right-password`, { token: free })).text,
      'locked',
      '10 a minute: one every 6 s',
    );
  });
});

describe('web sessions and grants', () => {
  test('a session lasts SESSION_IDLE_DAYS without a visit, and every visit renews it', async () => {
    const c = new WebClient(s);
    await register(c, 'dora', 'dora-password');
    s.clock.advance(2 * DAY - MIN);
    assert.equal((await c.get('/my')).status, 200, 'just inside the idle limit');
    s.clock.advance(2 * DAY - MIN);
    assert.equal((await c.get('/my')).status, 200, 'the last visit renewed it');
    s.clock.advance(2 * DAY);
    const r = await c.get('/my');
    assert.equal(r.status, 302, 'idle too long: logged out');
    assert.equal(r.location, '/login?next=%2Fmy');
    await login(c, 'dora', 'dora-password');
    assert.equal((await c.get('/my')).status, 200);
  });

  test('an unlock grant opens a password paste for ten minutes, then the form is back', async () => {
    const c = new WebClient(s);
    await register(c, 'erin', 'erin-password');
    const hash = await createViaForm(c, { content: 'behind a password', password: 'open sesame' });
    const v = new WebClient(s);
    await v.get(`/p/${hash}`);
    assert.equal((await v.post(`/p/${hash}`, { password: 'open sesame' })).status, 200);
    s.clock.advance(10 * MIN - 2000);
    assert.equal((await v.get(`/p/${hash}/raw`)).text, 'behind a password');
    s.clock.advance(2000);
    assert.equal((await v.get(`/p/${hash}/raw`)).status, 401);
  });

  test('a login budget spent by one address refills after a minute', async () => {
    const c = new WebClient(s);
    await register(c, 'fay', 'fay-password');
    const guesser = new WebClient(s);
    await guesser.get('/login');
    for (let i = 0; i < 10; i++)
      assert.equal((await guesser.post('/login', { name: 'fay', password: `nope-${i}` })).status, 401);
    assert.equal((await guesser.post('/login', { name: 'fay', password: 'fay-password' })).status, 429);
    s.clock.advance(6_000);
    assert.equal((await guesser.post('/login', { name: 'fay', password: 'fay-password' })).status, 303);
  });
});
