import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';
import { req, startServer, type TestServer } from '../helpers/server.ts';
import { registerAll, WebClient, type WebRes } from '../helpers/web-client.ts';

let s: TestServer;
let admin: WebClient;
let alice: WebClient;
let bob: WebClient;

before(async () => {
  s = await startServer({ env: { OPEN_REGISTRATION: '1' } });
  [admin, alice, bob] = await registerAll(s, 'admin', 'alice', 'bob');
});

async function create(c: WebClient, fields: Record<string, string>): Promise<WebRes> {
  await c.get('/api_keys.php');
  return c.post('/api_keys.php', { action: 'create', label: '', rate: '0', ...fields });
}
const secretOf = (r: WebRes): string => /id="new-secret" class="copyable" value="(pst_[A-Za-z0-9_]+)"/.exec(r.text)?.[1] ?? '';

describe('My API Keys', () => {
  test('sends anonymous visitors to the login page and back', async () => {
    const r = await new WebClient(s).get('/api_keys.php');
    assert.equal(r.status, 302);
    assert.equal(r.location, '/login?next=%2Fapi_keys.php');
  });

  test('creates a token and shows its secret exactly once, with a copy button and advice', async () => {
    const r = await create(alice, { label: 'CI <bot>', scope_read: '1', scope_write: '1', rate: '60' });
    assert.equal(r.status, 200);
    const secret = secretOf(r);
    assert.match(secret, /^pst_[A-Za-z0-9]{8}_[A-Za-z0-9]{32}$/);
    assert.match(r.text, /data-copy="new-secret"/);
    assert.match(r.text, /Keep it secret/);
    assert.match(r.text, /shown only this once/);
    assert.ok(r.text.includes('CI &lt;bot&gt;'));
    assert.equal(r.headers['cache-control'], 'no-store');

    const list = await alice.get('/api_keys.php');
    assert.ok(!list.text.includes(secret), 'the list never shows the secret');
    assert.match(list.text, /CI &lt;bot&gt;/);
    assert.match(list.text, /60 \/ min/);
    assert.match(list.text, /<span class="badge badge-accent">read<\/span><span class="badge badge-accent">write<\/span>/);
    assert.ok(!(await readFile(join(s.dataDir, 'accounts.json'), 'utf8')).includes(secret), 'only a hash is stored');

    // The token works on the API at once, and the page then shows when it was last used.
    const api = await req(s, 'POST', '/api/v1/paste_create.php', { token: secret, body: { content: 'via token' } });
    assert.equal(api.status, 200);
    assert.equal(api.headers['x-ratelimit-limit'], '60');
    const after = await alice.get('/api_keys.php');
    assert.match(after.text, /data-label="Last used"><time/);
  });

  test('bob does not see alice’s tokens', async () => {
    await create(alice, { label: 'alice-only', scope_read: '1' });
    assert.doesNotMatch((await bob.get('/api_keys.php')).text, /alice-only/);
  });

  test('a non-admin is not offered the admin scope and is refused it', async () => {
    const page = await bob.get('/api_keys.php');
    assert.match(page.text, /name="scope_read"/);
    assert.doesNotMatch(page.text, /name="scope_admin"/);
    const r = await create(bob, { scope_read: '1', scope_admin: '1' });
    assert.equal(r.status, 400);
    assert.match(r.text, /admin scope can only be held/);
    assert.equal(secretOf(r), '');
  });

  test('an admin may create an admin-scoped token', async () => {
    assert.match((await admin.get('/api_keys.php')).text, /name="scope_admin"/);
    const secret = secretOf(await create(admin, { scope_admin: '1' }));
    const api = await req(s, 'GET', '/api/v1/paste.php?hash=AAAAAAAAAA', { token: secret });
    assert.equal(api.status, 404, 'authenticated, the paste just does not exist');
  });

  const bad: [string, Record<string, string>, RegExp][] = [
    ['no scope', { scope_read: '' }, /at least one scope/],
    ['a negative rate', { scope_read: '1', rate: '-1' }, /whole number/],
    ['a fractional rate', { scope_read: '1', rate: '1.5' }, /whole number/],
    ['a huge rate', { scope_read: '1', rate: '1000000000' }, /whole number/],
    ['a long label', { scope_read: '1', label: 'x'.repeat(101) }, /at most 100/],
    ['a multi-line label', { scope_read: '1', label: 'a\nb' }, /single line/],
    ['a label with a C1 control', { scope_read: '1', label: 'a\u0085b' }, /single line/],
    ['a label with a line separator', { scope_read: '1', label: 'a\u2028b' }, /single line/],
    ['a label with a paragraph separator', { scope_read: '1', label: 'a\u2029b' }, /single line/],
    ['a label with a right-to-left override', { scope_read: '1', label: 'invoice\u202Egpj.exe' }, /text-direction controls/],
    ['a label with a bidi embedding', { scope_read: '1', label: '\u202Ax' }, /text-direction controls/],
    ['a label with a bidi isolate', { scope_read: '1', label: 'x\u2066y\u2069' }, /text-direction controls/],
  ];
  for (const [what, fields, message] of bad) {
    test(`refuses ${what} with 400`, async () => {
      const r = await create(bob, fields);
      assert.equal(r.status, 400);
      assert.match(r.text, message);
      assert.equal(secretOf(r), '');
    });
  }

  test('revokes the user’s own token, which stops working at once', async () => {
    const r = await create(alice, { label: 'short-lived', scope_read: '1' });
    const secret = secretOf(r);
    const id = secret.slice(4, 12);
    assert.equal((await req(s, 'GET', '/api/v1/paste.php?hash=AAAAAAAAAA', { token: secret })).status, 404);
    const revoked = await alice.post('/api_keys.php', { action: 'revoke', id });
    assert.equal(revoked.status, 303);
    assert.equal(revoked.location, '/api_keys.php?revoked=1');
    const page = await alice.get('/api_keys.php?revoked=1');
    assert.match(page.text, /The token was revoked/);
    assert.doesNotMatch(page.text, /short-lived/);
    assert.equal((await req(s, 'GET', '/api/v1/paste.php?hash=AAAAAAAAAA', { token: secret })).status, 401);
  });

  test('cannot revoke someone else’s token', async () => {
    const secret = secretOf(await create(alice, { label: 'not-yours', scope_read: '1' }));
    await bob.get('/api_keys.php');
    const r = await bob.post('/api_keys.php', { action: 'revoke', id: secret.slice(4, 12) });
    assert.equal(r.status, 404);
    assert.match(r.text, /There is no such token\./, 'the token’s own message, not the paste one');
    assert.doesNotMatch(r.text, /A paste may never have existed/);
    assert.match((await alice.get('/api_keys.php')).text, /not-yours/);
  });

  test('labels are shown isolated, and the label field allows 100 code points of any width', async () => {
    const r = await create(alice, { label: 'עברית label', scope_read: '1' });
    assert.ok(r.text.includes('API token · <bdi>עברית label</bdi>'));
    const page = await alice.get('/api_keys.php');
    assert.ok(page.text.includes('<span class="title-cell"><bdi>עברית label</bdi></span>'));
    assert.match(page.text, /id="label" name="label" maxlength="200"/);
    const emoji = await create(alice, { label: '🔑'.repeat(100), scope_read: '1' });
    assert.equal(emoji.status, 200, '100 emoji are 200 UTF-16 units but 100 characters');
  });

  test('an unknown action is a 400', async () => {
    await alice.get('/api_keys.php');
    assert.equal((await alice.post('/api_keys.php', { action: 'explode' })).status, 400);
  });
});
