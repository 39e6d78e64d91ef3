import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { req, startServer, type TestServer } from '../helpers/server.ts';
import { everythingStored } from '../helpers/stored.ts';
import { registerAll, WebClient, type WebRes } from '../helpers/web-client.ts';

let s: TestServer;
let admin: WebClient;
let alice: WebClient;
let bob: WebClient;

before(async () => {
  s = await startServer({ env: { OPEN_REGISTRATION: '1' } });
  [admin, alice, bob] = await registerAll(s, 'admin', 'alice', 'bob');
});

/** Creates a token the way the browser does: the POST, then the page it redirects to (which shows the secret). */
async function create(c: WebClient, fields: Record<string, string>): Promise<WebRes> {
  await c.get('/api_keys.php');
  const r = await c.post('/api_keys.php', { action: 'create', label: '', rate: '60', ...fields });
  return r.status === 303 && r.location !== undefined ? c.get(r.location) : r;
}
const secretOf = (r: WebRes): string =>
  /id="new-secret" class="copyable" value="(pst_[A-Za-z0-9_]+)"/.exec(r.text)?.[1] ?? '';

describe('a new token, POST-redirect-GET', () => {
  test('the secret is shown on the page the create redirects to, once: reloading it shows no secret and makes no token', async () => {
    await bob.get('/api_keys.php');
    const rows = (r: { text: string }): number => r.text.match(/<td class="full" data-label="Token">/g)?.length ?? 0;
    const before = rows(await bob.get('/api_keys.php'));
    const posted = await bob.post('/api_keys.php', { action: 'create', label: 'prg', scope_read: '1', rate: '60' });
    assert.equal(posted.status, 303);
    assert.match(posted.location ?? '', /^\/api_keys\.php\?created=[A-Za-z0-9]{22}$/);
    const shown = await bob.get(posted.location ?? '');
    assert.match(secretOf(shown), /^pst_/);
    const reloaded = await bob.get(posted.location ?? '');
    assert.equal(secretOf(reloaded), '');
    assert.match(reloaded.text, /its secret was shown once and is not kept/);
    assert.equal(rows(reloaded) - before, 1, 'one token, however often the page is reloaded');
    // Someone else's key shows nothing.
    const again = await bob.post('/api_keys.php', { action: 'create', label: 'prg2', scope_read: '1', rate: '60' });
    assert.equal(secretOf(await alice.get(again.location ?? '')), '');
  });

  test('revoking asks first', async () => {
    const made = await create(bob, { label: 'to revoke', scope_read: '1' });
    const id = /pst_([A-Za-z0-9]{8})_/.exec(secretOf(made))?.[1] ?? '';
    const list = await bob.get('/api_keys.php');
    assert.match(
      list.text,
      new RegExp(`<a class="btn btn-sm btn-ghost" href="/api_keys.php\\?revoke=${id}#revoke">Revoke</a>`),
    );
    const ask = await bob.get(`/api_keys.php?revoke=${id}`);
    assert.match(ask.text, /Revoke “[^”]*to revoke[^”]*”\?<\/strong> Every script using it stops working at once/);
    assert.match(
      ask.text,
      new RegExp(
        `<input type="hidden" name="id" value="${id}"><button class="btn btn-danger" type="submit">Revoke it</button>`,
      ),
    );
    assert.doesNotMatch((await alice.get(`/api_keys.php?revoke=${id}`)).text, /Revoke it/, "not someone else's");
  });
});

describe('the rate of a new token', () => {
  test('is the configured default (60) for users, who may lower it but not lift it or make it unlimited; admins may', async () => {
    const form = await alice.get('/api_keys.php');
    assert.match(form.text, /id="rate" name="rate" min="1" max="60" step="1" value="60"/);
    for (const rate of ['0', '61']) {
      const r = await create(alice, { scope_read: '1', rate });
      assert.equal(r.status, 400, rate);
      assert.match(r.text, /The rate limit must be from 1 to 60 requests a minute; an admin can raise it/);
    }
    assert.equal((await create(alice, { scope_read: '1', rate: '5' })).status, 200);
    assert.match(
      (await admin.get('/api_keys.php')).text,
      /id="rate" name="rate" min="0" max="999999999" step="1" value="60"/,
    );
    assert.equal((await create(admin, { scope_read: '1', rate: '0' })).status, 200);
  });
});

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
    assert.match(
      list.text,
      /<span class="badge badge-accent">read<\/span><span class="badge badge-accent">write<\/span>/,
    );
    assert.ok(!(await everythingStored(s.dataDir)).includes(secret), 'only a hash is stored');

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
    [
      'a label with a right-to-left override',
      { scope_read: '1', label: 'invoice\u202Egpj.exe' },
      /text-direction controls/,
    ],
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
