import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { cleanup, makeToken, req, startServer, type AppServer } from './helpers/server.ts';
import { createViaForm, register, WebClient } from './helpers/web-client.ts';

/**
 * Guessing, as a hostile client would: many wrong answers at once, through the API and the
 * web together. The README promises a number of checks; concurrency must not stretch it.
 */
let s: AppServer;
let owner: WebClient;
let reader: string;
before(async () => {
  s = await startServer({ env: { TRUST_PROXY: '1', AUTH_FAIL_LIMIT_PER_MINUTE: '1000', OPEN_REGISTRATION: '1' } });
  owner = new WebClient(s);
  await register(owner, 'owner', 'owner-password');
  reader = await makeToken(s.dataDir, { user: 'reader', scopes: 'read' });
});

describe('paste passwords', () => {
  test('concurrent wrong guesses from one client, by API and web form together, get at most ten checks', async () => {
    const hash = await createViaForm(owner, { content: 'guarded', password: 'the-right-one' });
    const web = new WebClient(s);
    await web.get(`/p/${hash}`);
    const guesses = Array.from({ length: 30 }, (_, i) =>
      i % 2 === 0
        ? req(s, 'GET', `/api/v1/raw.php?hash=${hash}&password=wrong-${i}`, { token: reader })
        : web.post(`/p/${hash}`, { password: `wrong-${i}` }),
    );
    const statuses = (await Promise.all(guesses)).map((r) => r.status);
    assert.equal(statuses.filter((x) => x === 403).length, 10, statuses.join(','));
    assert.equal(statuses.filter((x) => x === 429).length, 20, statuses.join(','));
    // The budget is one: spent through both doors, it is spent for both, right password or not.
    assert.equal(
      (await req(s, 'GET', `/api/v1/raw.php?hash=${hash}&password=the-right-one`, { token: reader })).status,
      429,
    );
    const page = await web.post(`/p/${hash}`, { password: 'the-right-one' });
    assert.equal(page.status, 429);
    assert.match(String(page.headers['retry-after']), /^\d+$/);
    // Another client has its own budget, and the owner needs no password at all.
    const elsewhere = await req(s, 'GET', `/api/v1/raw.php?hash=${hash}&password=the-right-one`, {
      token: reader,
      headers: { 'x-forwarded-for': '198.51.100.20' },
    });
    assert.equal(elsewhere.text, 'guarded');
  });

  test('right passwords cost nothing: a reader may open a paste more than ten times a minute', async () => {
    const hash = await createViaForm(owner, { content: 'often read', password: 'pw-123456' });
    for (let i = 0; i < 15; i++) {
      assert.equal(
        (await req(s, 'GET', `/api/v1/raw.php?hash=${hash}&password=pw-123456`, { token: reader })).status,
        200,
        `read ${i + 1}`,
      );
    }
  });
});

describe('API tokens', () => {
  test('concurrent bad tokens from one address get exactly AUTH_FAIL_LIMIT_PER_MINUTE answers of 401', async () => {
    const t = await startServer({ env: { AUTH_FAIL_LIMIT_PER_MINUTE: '5' } });
    try {
      const bad = `pst_AAAAAAAA_${'x'.repeat(32)}`;
      const statuses = (
        await Promise.all(
          Array.from({ length: 20 }, () => req(t, 'GET', '/api/v1/paste.php?hash=AAAAAAAAAA', { token: bad })),
        )
      ).map((r) => r.status);
      assert.equal(statuses.filter((x) => x === 401).length, 5, statuses.join(','));
      assert.equal(statuses.filter((x) => x === 429).length, 15);
    } finally {
      await t.stop();
      await cleanup(t.dataDir);
    }
  });
});

describe('web logins', () => {
  const from = (ip: string) => ({ 'x-forwarded-for': ip });

  async function loginFrom(ip: string, name: string, password: string): Promise<number> {
    const c = new WebClient(s);
    await c.request('GET', '/login', undefined, from(ip));
    return (await c.request('POST', '/login', { _csrf: c.csrf, name, password, next: '/' }, from(ip))).status;
  }

  test('a stranger who spent an account’s failures cannot lock its owner out from another address', async () => {
    await register(new WebClient(s), 'victim', 'victim-password');
    const guesses = await Promise.all(
      Array.from({ length: 25 }, (_, i) => loginFrom('203.0.113.66', 'victim', `guess-${i}-x`)),
    );
    assert.equal(guesses.filter((x) => x === 401).length, 10, guesses.join(','));
    assert.equal(guesses.filter((x) => x === 429).length, 15);
    assert.equal(await loginFrom('203.0.113.66', 'victim', 'victim-password'), 429, 'the guesser’s address stays shut');
    assert.equal(await loginFrom('198.51.100.7', 'victim', 'victim-password'), 303, 'the owner, elsewhere, gets in');
    assert.equal(await loginFrom('198.51.100.7', 'VICTIM', 'wrong-password'), 401, 'and has a budget of their own');
  });
});
