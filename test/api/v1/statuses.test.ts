import { until } from '../../helpers/until.ts';
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { cli, makeToken, req, startServer, type AppServer, type Res } from '../../helpers/server.ts';

let server: AppServer;
let token: string;
let readOnly: string;

before(async () => {
  server = await startServer({ env: { MAX_PASTE_BYTES: '1000', AUTH_FAIL_LIMIT_PER_MINUTE: '1000' } });
  token = await makeToken(server.dataDir, { user: 'alice' });
  readOnly = await makeToken(server.dataDir, { user: 'alice', scopes: 'read' });
});

function assertError(r: Res, status: number, message?: RegExp): void {
  assert.equal(r.status, status, r.text);
  assert.equal(r.json.ok, false);
  assert.equal(typeof r.json.error, 'string');
  assert.ok((r.json.error as string).length > 0);
  if (message) assert.match(r.json.error as string, message);
  assert.match(String(r.headers['content-type']), /^application\/json/);
}

const create = async (body: Record<string, unknown>, t = token): Promise<string> => {
  const r = await req(server, 'POST', '/api/v1/paste_create.php', { token: t, body });
  assert.equal(r.status, 200, r.text);
  return r.json['hash'] as string;
};

describe('400 Bad Request', () => {
  const cases: [string, Record<string, unknown> | string, RegExp][] = [
    ['malformed JSON', '{"content": ', /JSON/],
    ['a JSON array', '["content"]', /object/],
    ['missing content', { title: 'x' }, /content/],
    ['empty content', { content: '' }, /content/],
    ['a nested value', { content: { a: 1 } }, /content/],
    ['an unknown privacy', { content: 'x', privacy: 'secret' }, /privacy/],
    ['an unknown expiry', { content: 'x', expiry: '2y' }, /expiry/],
    ['a bad flag', { content: 'x', burn_after_read: 'yes' }, /burn_after_read/],
    ['a bad highlight flag', { content: 'x', highlight: 2 }, /highlight/],
    ['a title over 200 characters', { content: 'x', title: 'é'.repeat(201) }, /title/],
    [
      'a lone surrogate in the content (JSON can escape one)',
      '{"content":"a\\ud800b"}',
      /content must be valid Unicode/,
    ],
    ['a title with a line separator', { content: 'x', title: 'one\u2028two' }, /title/],
  ];
  for (const [name, body, message] of cases) {
    test(`paste_create.php answers 400 for ${name}`, async () => {
      const r = await req(server, 'POST', '/api/v1/paste_create.php', {
        token,
        body,
        headers: { 'content-type': 'application/json' },
      });
      assertError(r, 400, message);
    });
  }

  test('ignores unknown fields, whatever they hold', async () => {
    await create({ content: 'x', meta: { a: [1, 2] }, tags: ['a'], n: 1 });
  });

  test('accepts a title of exactly 200 characters', async () => {
    await create({ content: 'x', title: '😀'.repeat(200) });
  });

  test('accepts the flag spellings 0/1, "0"/"1" and false/true', async () => {
    for (const v of [0, 1, '0', '1', false, true]) await create({ content: 'x', highlight: v });
  });

  for (const bad of ['short', 'AAAAAAAAAA1', '../../etc/', 'AAAAAAAAA%2F', '']) {
    test(`paste.php answers 400 for the hash "${bad}"`, async () => {
      assertError(await req(server, 'GET', `/api/v1/paste.php?hash=${bad}`, { token }), 400, /hash/);
    });
  }

  test('paste.php answers 400 when hash is missing', async () => {
    assertError(await req(server, 'GET', '/api/v1/paste.php', { token }), 400, /hash/);
  });

  test('a malformed percent-encoding in a form body is 400', async () => {
    const r = await req(server, 'POST', '/api/v1/paste_create.php', {
      token,
      body: 'content=%E0%A4%A',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    assertError(r, 400, /percent/);
  });

  test('invalid UTF-8 in the body is 400', async () => {
    const r = await req(server, 'POST', '/api/v1/paste_create.php', {
      token,
      body: Buffer.from([...Buffer.from('{"content":"'), 0xc3, 0x28, ...Buffer.from('"}')]),
      headers: { 'content-type': 'application/json' },
    });
    assertError(r, 400);
  });

  test('__proto__ in a JSON body is only an ignored key, never a prototype', async () => {
    const r = await req(server, 'POST', '/api/v1/paste_create.php', {
      token,
      body: '{"content":"proto","__proto__":{"privacy":"private"},"constructor":{"prototype":{"x":1}}}',
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(r.status, 200, r.text);
    const got = await req(server, 'GET', `/api/v1/paste.php?hash=${r.json['hash']}`, { token });
    assert.equal((got.json['paste'] as Record<string, unknown>)['privacy'], 'public');
    assert.equal(({} as Record<string, unknown>)['x'], undefined);
  });
});

describe('401 Unauthorized', () => {
  test('no token', async () => {
    assertError(await req(server, 'GET', '/api/v1/paste.php?hash=AAAAAAAAAA'), 401, /token/);
  });
  test('an unknown token', async () => {
    const fake = `pst_AAAAAAAA_${'A'.repeat(32)}`;
    assertError(await req(server, 'GET', '/api/v1/paste.php?hash=AAAAAAAAAA', { token: fake }), 401);
  });
  test('a malformed Authorization header', async () => {
    const r = await req(server, 'GET', '/api/v1/paste.php?hash=AAAAAAAAAA', {
      headers: { authorization: 'Basic abc' },
    });
    assertError(r, 401);
  });
  test('a token revoked with the CLI is refused on the next request', async () => {
    const t = await makeToken(server.dataDir, { user: 'alice', scopes: 'read' });
    assert.equal((await req(server, 'GET', '/api/v1/paste.php?hash=AAAAAAAAAA', { token: t })).status, 404);
    const id = t.split('_')[1] as string;
    await cli(server.dataDir, ['token', 'revoke', id]);
    assertError(await req(server, 'GET', '/api/v1/paste.php?hash=AAAAAAAAAA', { token: t }), 401, /revoked/);
  });
  test('a password-protected paste read without the password', async () => {
    const hash = await create({ content: 'secret stuff', password: 'hunter22' });
    const bob = await makeToken(server.dataDir, { user: 'bob', scopes: 'read' });
    assertError(await req(server, 'GET', `/api/v1/paste.php?hash=${hash}`, { token: bob }), 401, /^Password required$/);
  });
});

describe('403 Forbidden', () => {
  test('a token without the write scope cannot create', async () => {
    const r = await req(server, 'POST', '/api/v1/paste_create.php', { token: readOnly, body: { content: 'x' } });
    assertError(r, 403, /write/);
  });
  test('a write-only token cannot read', async () => {
    const w = await makeToken(server.dataDir, { user: 'alice', scopes: 'write' });
    assertError(await req(server, 'GET', '/api/v1/paste.php?hash=AAAAAAAAAA', { token: w }), 403, /read/);
  });
  test('someone else cannot edit or delete a public paste', async () => {
    const hash = await create({ content: 'mine' });
    const bob = await makeToken(server.dataDir, { user: 'bob', scopes: 'read,write' });
    assertError(
      await req(server, 'POST', '/api/v1/paste_edit.php', { token: bob, body: { hash, content: 'yours' } }),
      403,
    );
    assertError(await req(server, 'POST', '/api/v1/paste_delete.php', { token: bob, body: { hash } }), 403);
  });
  test('a wrong password', async () => {
    const hash = await create({ content: 'secret stuff', password: 'hunter22' });
    const bob = await makeToken(server.dataDir, { user: 'bob', scopes: 'read' });
    const r = await req(server, 'GET', `/api/v1/paste.php?hash=${hash}&password=nope`, { token: bob });
    assertError(r, 403, /^Invalid password$/);
  });
});

describe('404 Not Found', () => {
  test('no such paste', async () => {
    assertError(await req(server, 'GET', '/api/v1/paste.php?hash=ZZZZZZZZZZ', { token }), 404);
  });
  test('an unknown endpoint, even without a token', async () => {
    assertError(await req(server, 'GET', '/api/v1/nope.php'), 404, /endpoint/);
    assertError(await req(server, 'GET', '/api/v2/paste.php'), 404);
  });
  test('a path trick does not reach a file', async () => {
    assertError(await req(server, 'GET', '/api/v1/../../package.json', { token }), 404);
  });
  test("another user's private paste answers exactly like a missing one", async () => {
    const hash = await create({ content: 'private', privacy: 'private' });
    const bob = await makeToken(server.dataDir, { user: 'bob', scopes: 'read,write' });
    // A token the CLI made is honoured within a second on PostgreSQL (CONTRACT §8), at once on files.
    await until(
      async () => (await req(server, 'GET', '/api/v1/paste.php?hash=AAAAAAAAAA', { token: bob })).status !== 401,
      {
        what: "bob's new token to be honoured",
      },
    );
    const missing = await req(
      server,
      'GET',
      `/api/v1/paste.php?hash=${hash.slice(0, 9)}${hash[9] === 'A' ? 'B' : 'A'}`,
      { token: bob },
    );
    const priv = await req(server, 'GET', `/api/v1/paste.php?hash=${hash}`, { token: bob });
    assertError(priv, 404);
    assert.deepEqual(priv.json, missing.json);
    assertError(await req(server, 'POST', '/api/v1/paste_edit.php', { token: bob, body: { hash, content: 'x' } }), 404);
  });
});

describe('405 Method Not Allowed', () => {
  test('GET on a POST endpoint answers 405 with Allow', async () => {
    const r = await req(server, 'GET', '/api/v1/paste_create.php', { token });
    assertError(r, 405);
    assert.equal(r.headers['allow'], 'POST');
  });
  test('POST on a GET endpoint answers 405 with Allow, before authentication', async () => {
    const r = await req(server, 'POST', '/api/v1/paste.php');
    assertError(r, 405);
    assert.equal(r.headers['allow'], 'GET, HEAD');
  });
});

describe('410 Gone', () => {
  test('an expired paste', async () => {
    const hash = await create({ content: 'short lived', expiry: '10m' });
    assert.equal((await req(server, 'GET', `/api/v1/paste.php?hash=${hash}`, { token })).status, 200);
    server.clock.advance(10 * 60_000);
    assertError(await req(server, 'GET', `/api/v1/paste.php?hash=${hash}`, { token }), 410, /expired/);
  });
});

describe('413 Payload Too Large', () => {
  test('content over MAX_PASTE_BYTES (counted in UTF-8 bytes)', async () => {
    assertError(
      await req(server, 'POST', '/api/v1/paste_create.php', { token, body: { content: 'é'.repeat(501) } }),
      413,
    );
    await create({ content: 'é'.repeat(500) });
  });
  test('a body larger than any paste could need, refused by Content-Length', async () => {
    const r = await req(server, 'POST', '/api/v1/paste_create.php', { token, body: { content: 'x'.repeat(70_000) } });
    assertError(r, 413);
  });
});

describe('415 Unsupported Media Type', () => {
  test('a POST with text/plain anywhere but create, or with a charset other than UTF-8', async () => {
    const edit = await req(server, 'POST', '/api/v1/paste_edit.php', {
      token,
      body: 'content=x',
      headers: { 'content-type': 'text/plain' },
    });
    assertError(edit, 415);
    const latin1 = await req(server, 'POST', '/api/v1/paste_create.php', {
      token,
      body: 'x',
      headers: { 'content-type': 'text/plain; charset=latin1' },
    });
    assertError(latin1, 415);
    const other = await req(server, 'POST', '/api/v1/paste_create.php', {
      token,
      body: 'x',
      headers: { 'content-type': 'text/html' },
    });
    assertError(other, 415);
  });
  test('a POST with no content type', async () => {
    assertError(await req(server, 'POST', '/api/v1/paste_delete.php', { token, body: 'hash=AAAAAAAAAA' }), 415);
  });
});

describe('precedence (README, API status table)', () => {
  test('wrong method beats missing authentication', async () => {
    assert.equal((await req(server, 'DELETE', '/api/v1/paste_delete.php')).status, 405);
  });
  test('authentication beats scope and body errors', async () => {
    const r = await req(server, 'POST', '/api/v1/paste_create.php', {
      body: 'junk',
      headers: { 'content-type': 'text/plain' },
    });
    assertError(r, 401);
  });
  test('scope beats body errors', async () => {
    const r = await req(server, 'POST', '/api/v1/paste_create.php', {
      token: readOnly,
      body: 'junk',
      headers: { 'content-type': 'text/plain' },
    });
    assertError(r, 403);
  });
  test('415 beats 400', async () => {
    const r = await req(server, 'POST', '/api/v1/paste_create.php', {
      token,
      body: '{bad',
      headers: { 'content-type': 'text/csv' },
    });
    assertError(r, 415);
  });
  test('413 beats 400 on other fields', async () => {
    const r = await req(server, 'POST', '/api/v1/paste_create.php', {
      token,
      body: { content: 'x'.repeat(1001), privacy: 'nope' },
    });
    assertError(r, 413);
  });
  test('a tokenless create from another site is refused after authentication, before the rate limit and the body', async () => {
    const open = await startServer({ env: { ANONYMOUS_PASTES: '1', ANONYMOUS_RATE_PER_MINUTE: '1' } });
    const evil = { origin: 'https://evil.example', 'content-type': 'text/csv' };
    assertError(await req(open, 'POST', '/api/v1/paste_create.php', { body: '{bad', headers: evil }), 403);
    assert.equal(
      (await req(open, 'POST', '/api/v1/paste_create.php', { body: { content: 'x', expiry: '1h' } })).status,
      200,
    );
    const r = await req(open, 'POST', '/api/v1/paste_create.php', { body: '{bad', headers: evil });
    assertError(r, 403);
    assert.equal(r.json['code'], 'cross_site');
    assertError(
      await req(open, 'POST', '/api/v1/paste_create.php', { body: '{bad', headers: { 'content-type': 'text/csv' } }),
      429,
    );
  });
  test('a bad hash is refused before the paste is looked up', async () => {
    assertError(await req(server, 'POST', '/api/v1/paste_delete.php', { token, body: { hash: '../x' } }), 400);
  });
});
