import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { makeToken, req, startServer, type TestServer } from '../helpers/server.ts';
import { registerAll, WebClient, type WebRes } from '../helpers/web-client.ts';
import { until } from '../helpers/until.ts';

let s: TestServer;
let admin: WebClient;
let alice: WebClient;
let aliceToken: string;
let rootToken: string;

before(async () => {
  s = await startServer({ env: { OPEN_REGISTRATION: '1' } });
  [admin, alice] = await registerAll(s, 'root', 'alice');
  aliceToken = await makeToken(s.dataDir, { user: 'alice', scopes: 'read' });
  rootToken = await makeToken(s.dataDir, { user: 'root', scopes: 'read,write' });
});

const idOf = (secret: string): string => secret.slice(4, 12);

describe('admin pages', () => {
  test('are 403 for non-admins (GET and POST) and send anonymous visitors to log in', async () => {
    for (const path of ['/admin/tokens', '/admin/logs']) {
      const r = await alice.get(path);
      assert.equal(r.status, 403, path);
      assert.match(r.text, /for admins only/);
      assert.equal((await new WebClient(s).get(path)).status, 302);
    }
    await alice.get('/my');
    const r = await alice.post('/admin/tokens', { id: idOf(aliceToken), scope_admin: '1', rate: '0' });
    assert.equal(r.status, 403);
    assert.doesNotMatch((await alice.get('/')).text, /href="\/admin\/tokens"/);
  });
});

describe('API Tokens', () => {
  test('lists every user’s tokens with a form for scopes and rate', async () => {
    const r = await admin.get('/admin/tokens');
    assert.equal(r.status, 200);
    assert.ok(r.text.includes(`id="token-${idOf(aliceToken)}"`));
    assert.ok(r.text.includes(`id="token-${idOf(rootToken)}"`));
    assert.ok(r.text.includes(`id="t-${idOf(rootToken)}-admin"`), 'the admin scope is offered for an admin’s token');
    assert.ok(!r.text.includes(`id="t-${idOf(aliceToken)}-admin"`), 'but not for a plain user’s token');
  });

  test('changes a token’s scopes and rate limit, effective at once on the API', async () => {
    await admin.get('/admin/tokens');
    const r = await admin.post('/admin/tokens', { id: idOf(aliceToken), scope_read: '1', scope_write: '1', rate: '2' });
    assert.equal(r.status, 303);
    // A browser drops the #fragment before asking; so does this client.
    assert.match((await admin.get((r.location ?? '').split('#')[0] ?? '')).text, /was updated/);
    const api = await req(s, 'POST', '/api/v1/paste_create.php', {
      token: aliceToken,
      body: { content: 'now allowed' },
    });
    assert.equal(api.status, 200);
    assert.equal(api.headers['x-ratelimit-limit'], '2');
    const list = await admin.get('/admin/tokens');
    assert.ok(list.text.includes(`id="rate-${idOf(aliceToken)}" name="rate" min="0" max="999999999" value="2"`));
  });

  test('refuses the admin scope for a plain user’s token, and bad values', async () => {
    await admin.get('/admin/tokens');
    const r = await admin.post('/admin/tokens', { id: idOf(aliceToken), scope_admin: '1', rate: '0' });
    assert.equal(r.status, 400);
    assert.match(r.text, /admin scope can only be held/);
    assert.equal((await admin.post('/admin/tokens', { id: idOf(aliceToken), rate: '0' })).status, 400);
    assert.equal(
      (await admin.post('/admin/tokens', { id: idOf(aliceToken), scope_read: '1', rate: 'lots' })).status,
      400,
    );
    const missing = await admin.post('/admin/tokens', { id: 'nosuchid', scope_read: '1', rate: '0' });
    assert.equal(missing.status, 404);
    assert.match(missing.text, /There is no such token\./);
    assert.doesNotMatch(missing.text, /A paste may never have existed/);
    assert.equal((await admin.get('/admin/tokens?saved=<b>forged</b>')).text.includes('forged'), false);
  });

  test('gives an admin’s token the admin scope', async () => {
    await admin.get('/admin/tokens');
    assert.equal((await admin.post('/admin/tokens', { id: idOf(rootToken), scope_admin: '1', rate: '0' })).status, 303);
    const r = await req(s, 'GET', '/api/v1/paste.php?hash=AAAAAAAAAA', { token: rootToken });
    assert.equal(r.status, 404);
  });
});

describe('API Logs', () => {
  let page: WebRes;
  before(async () => {
    // 55 reads by root, 5 failures without a token, one create by alice.
    for (let i = 0; i < 55; i++) await req(s, 'GET', '/api/v1/paste.php?hash=AAAAAAAAAA', { token: rootToken });
    for (let i = 0; i < 5; i++) await req(s, 'GET', '/api/v1/raw.php?hash=AAAAAAAAAA');
    await req(s, 'POST', '/api/v1/paste_create.php', { token: aliceToken, body: { content: 'logged' } });
    // The log is flushed about once a second.
    await until(
      async () => {
        page = await admin.get('/admin/logs?user=alice&endpoint=/api/v1/paste_create.php&status=2');
        return (page.text.match(/<tr>/g)?.length ?? 0) >= 3;
      },
      { what: "alice's create in API Logs" },
    );
  });

  test('shows the newest entries first, 50 a page, with a link to older ones', async () => {
    const first = await admin.get('/admin/logs');
    assert.equal(first.status, 200);
    assert.equal(first.text.match(/<tr>/g)?.length, 51, 'a header row and 50 entries');
    const table = /<table[\s\S]*<\/table>/.exec(first.text)?.[0] ?? '';
    assert.ok(table.indexOf('paste_create.php') < table.indexOf('raw.php'), 'newest first');
    const older = /href="(\/admin\/logs\?cursor=[^"]+)" rel="next"/.exec(first.text)?.[1];
    assert.ok(older !== undefined);
    const second = await admin.get(older.replaceAll('&amp;', '&'));
    assert.ok((second.text.match(/<tr>/g)?.length ?? 0) > 1);
    assert.match(second.text, /Newest/);
  });

  test('filters by user, endpoint and status class', async () => {
    const rows = page.text.match(/<tr>/g)?.length ?? 0;
    assert.equal(rows, 3, 'alice’s two creates (one from the token test) plus the header');
    assert.doesNotMatch(page.text, /paste\.php</);
    const failures = await admin.get('/admin/logs?status=4&endpoint=%2Fapi%2Fv1%2Fraw.php');
    assert.equal(failures.text.match(/<tr>/g)?.length, 6);
    assert.match(failures.text, /API token required/);
  });

  test('filters by token id (with or without the pst_ prefix) and by time', async () => {
    const byToken = await admin.get(`/admin/logs?token=${idOf(aliceToken)}`);
    assert.equal(byToken.text.match(/<tr>/g)?.length, 3);
    assert.equal((await admin.get(`/admin/logs?token=pst_${idOf(aliceToken)}`)).text.match(/<tr>/g)?.length, 3);
    const future = await admin.get('/admin/logs?from=2999-01-01T00:00');
    assert.match(future.text, /No log entries match/);
    const past = await admin.get('/admin/logs?to=2000-01-01');
    assert.match(past.text, /No log entries match/);
    const now = new Date(Date.now() + 60_000).toISOString().slice(0, 16);
    assert.ok(
      ((await admin.get(`/admin/logs?to=${now}&user=${encodeURIComponent('2')}`)).text.match(/<tr>/g)?.length ?? 0) > 1,
    );
  });

  test('reports unusable filters and refuses a forged cursor with 400', async () => {
    const r = await admin.get('/admin/logs?token=bad!&user=nobody&from=yesterday');
    assert.equal(r.status, 200);
    assert.match(r.text, /A token id is 8 letters/);
    assert.match(r.text, /No user has that name/);
    assert.match(r.text, /must be a date and time/);
    assert.equal((await admin.get('/admin/logs?cursor=not-a-cursor')).status, 400);
  });

  test('web page requests are not written to the API log', async () => {
    const r = await admin.get('/admin/logs?endpoint=%2Fadmin%2Flogs');
    assert.match(r.text, /No log entries match/);
    const table = /<table[\s\S]*<\/table>/.exec((await admin.get('/admin/logs')).text)?.[0] ?? '';
    assert.match(table, /\/api\/v1\//);
    assert.doesNotMatch(table, /\/api_keys\.php|\/register|\/admin\//);
  });
});
