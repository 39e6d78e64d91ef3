import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { makeToken, req, startServer, uploadUntilClosed, type TestServer } from '../../helpers/server.ts';

let server: TestServer;
let alice: string;
let bob: string;
let writeOnly: string;

before(async () => {
  server = await startServer({ env: { AUTH_FAIL_LIMIT_PER_MINUTE: '1000' } });
  alice = await makeToken(server.dataDir, { user: 'alice' });
  bob = await makeToken(server.dataDir, { user: 'bob', scopes: 'read' });
  writeOnly = await makeToken(server.dataDir, { user: 'bob', scopes: 'write' });
});

async function create(body: Record<string, unknown>): Promise<string> {
  const r = await req(server, 'POST', '/api/v1/paste_create.php', { token: alice, body });
  assert.equal(r.status, 200, r.text);
  return r.json['hash'] as string;
}

describe('HEAD requests', () => {
  test('HEAD on paste.php and raw.php neither burns a one-time paste nor counts a view', async () => {
    const hash = await create({ content: 'head must not burn', burn_after_read: 1 });
    for (const path of [`/api/v1/raw.php?hash=${hash}`, `/api/v1/paste.php?hash=${hash}`]) {
      const head = await req(server, 'HEAD', path, { token: bob });
      assert.equal(head.status, 200);
      assert.equal(head.text, '');
      assert.equal(head.headers['content-length'], undefined, 'nor gives away its size');
    }
    // Any other paste's HEAD has the length its GET has.
    const plain = await create({ content: 'an ordinary paste' });
    for (const path of [`/api/v1/raw.php?hash=${plain}`, `/api/v1/paste.php?hash=${plain}`]) {
      const head = await req(server, 'HEAD', path, { token: bob });
      assert.equal(
        head.headers['content-length'],
        String(Buffer.byteLength((await req(server, 'GET', path, { token: bob })).text)),
      );
    }
    const get = await req(server, 'GET', `/api/v1/paste.php?hash=${hash}`, { token: bob });
    assert.equal(get.status, 200);
    assert.equal((get.json['paste'] as Record<string, unknown>)['content'], 'head must not burn');
    assert.equal((get.json['paste'] as Record<string, unknown>)['view_count'], 1);
    assert.equal((await req(server, 'HEAD', `/api/v1/raw.php?hash=${hash}`, { token: bob })).status, 410);
  });
});

describe('a malformed query string answers 400 only after authentication and scope', () => {
  test('without a token it is 401', async () => {
    assert.equal((await req(server, 'GET', '/api/v1/paste.php?hash=a&hash=b')).status, 401);
    assert.equal((await req(server, 'GET', '/api/v1/paste.php?hash=%ZZ')).status, 401);
  });
  test('with a token lacking the scope it is 403', async () => {
    assert.equal((await req(server, 'GET', '/api/v1/paste.php?hash=%ZZ', { token: writeOnly })).status, 403);
  });
  test('with a good token it is 400, and the token in the same query still authenticates', async () => {
    const r = await req(server, 'GET', `/api/v1/paste.php?hash=%ZZ&token=${bob}`);
    assert.equal(r.status, 400);
    assert.match(r.json.error as string, /percent/);
  });
});

describe('bodies refused before they arrive', () => {
  test('a 401 to a huge upload closes the connection instead of reading it all', async () => {
    const declared = 50_000_000;
    const result = await uploadUntilClosed(
      server.port,
      `POST /api/v1/paste_create.php HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: ${declared}\r\n\r\n`,
      declared,
    );
    assert.match(result.head, /^HTTP\/1\.1 401 /);
    assert.match(result.head, /\r\nconnection: close\r\n/i);
    assert.ok(result.sent < 50_000_000, `sent ${result.sent} bytes`);
  });
});

describe('paste passwords', () => {
  test('a UTF-8 password works in the X-Paste-Password header as in the query', async () => {
    const hash = await create({ content: 'umlauts', password: 'pässwörd' });
    const viaHeader = await req(server, 'GET', `/api/v1/raw.php?hash=${hash}`, {
      token: bob,
      headers: { 'x-paste-password': Buffer.from('pässwörd', 'utf8').toString('latin1') },
    });
    assert.equal(viaHeader.status, 200, viaHeader.text);
    const viaQuery = await req(
      server,
      'GET',
      `/api/v1/raw.php?hash=${hash}&password=${encodeURIComponent('pässwörd')}`,
      { token: bob },
    );
    assert.equal(viaQuery.text, 'umlauts');
  });

  test('a password that starts with U+FEFF is the same password in the header as in the body that set it', async () => {
    const hash = await create({ content: 'zero width', password: '\ufeffsecret-pw' });
    const header = (pw: string): Promise<Awaited<ReturnType<typeof req>>> =>
      req(server, 'GET', `/api/v1/raw.php?hash=${hash}`, {
        token: bob,
        headers: { 'x-paste-password': Buffer.from(pw, 'utf8').toString('latin1') },
      });
    assert.equal((await header('\ufeffsecret-pw')).status, 200);
    assert.equal((await header('secret-pw')).status, 403);
  });

  test('wrong guesses are limited per client and paste, even for an unlimited token', async () => {
    const hash = await create({ content: 'guarded', password: 'the-right-one' });
    const statuses: number[] = [];
    for (let i = 0; i < 11; i++) {
      statuses.push(
        (await req(server, 'GET', `/api/v1/raw.php?hash=${hash}&password=wrong${i}`, { token: bob })).status,
      );
    }
    assert.deepEqual(statuses, [...Array<number>(10).fill(403), 429]);
    const right = await req(server, 'GET', `/api/v1/raw.php?hash=${hash}&password=the-right-one`, { token: bob });
    assert.equal(right.status, 429, 'no more tries until the budget refills');
    assert.ok(Number(right.headers['retry-after']) >= 1);
    assert.equal(
      (await req(server, 'GET', `/api/v1/raw.php?hash=${hash}`, { token: alice })).text,
      'guarded',
      'the owner needs no password',
    );
  });
});

describe('response headers', () => {
  test('raw.php serves user content with nosniff', async () => {
    const hash = await create({ content: '<html><script>alert(1)</script>' });
    const r = await req(server, 'GET', `/api/v1/raw.php?hash=${hash}`, { token: bob });
    assert.equal(r.headers['x-content-type-options'], 'nosniff');
    assert.match(String(r.headers['content-type']), /^text\/plain/);
  });
});

describe('rendered responses are never stale', () => {
  test('paste.php and raw.php show an edit at once, after being served from the cache', async () => {
    const hash = await create({ content: 'first version', title: 'one' });
    for (let i = 0; i < 3; i++) {
      assert.equal((await req(server, 'GET', `/api/v1/raw.php?hash=${hash}`, { token: bob })).text, 'first version');
      await req(server, 'GET', `/api/v1/paste.php?hash=${hash}`, { token: bob });
    }
    const e = await req(server, 'POST', '/api/v1/paste_edit.php', {
      token: alice,
      body: { hash, content: 'second version', title: 'two' },
    });
    assert.equal(e.status, 200);
    assert.equal((await req(server, 'GET', `/api/v1/raw.php?hash=${hash}`, { token: bob })).text, 'second version');
    const p = (await req(server, 'GET', `/api/v1/paste.php?hash=${hash}`, { token: bob })).json['paste'] as Record<
      string,
      unknown
    >;
    assert.deepEqual([p['title'], p['content'], p['view_count']], ['two', 'second version', 8]);
    await req(server, 'POST', '/api/v1/paste_edit.php', { token: alice, body: { hash, privacy: 'private' } });
    assert.equal((await req(server, 'GET', `/api/v1/raw.php?hash=${hash}`, { token: bob })).status, 404);
  });
});

describe('large pastes', () => {
  test('raw.php serves a large paste byte for byte, and its edit at once', async () => {
    const big = 'ü✓ line of a large paste\n'.repeat(2000);
    const hash = await create({ content: big });
    for (let i = 0; i < 2; i++)
      assert.equal((await req(server, 'GET', `/api/v1/raw.php?hash=${hash}`, { token: bob })).text, big);
    await req(server, 'POST', '/api/v1/paste_edit.php', { token: alice, body: { hash, content: `${big}tail` } });
    const r = await req(server, 'GET', `/api/v1/raw.php?hash=${hash}`, { token: bob });
    assert.equal(r.text, `${big}tail`);
    assert.match(String(r.headers['content-type']), /^text\/plain; charset=utf-8/);
    assert.equal(Number(r.headers['content-length']), Buffer.byteLength(`${big}tail`));
  });

  test('paste.php answers a large paste whole with a correct length, and its edit at once', async () => {
    const big = '"quoted" \\ back\tslash ü✓\u2028 line\n'.repeat(1000);
    const hash = await create({ content: big, title: 't' });
    for (let i = 0; i < 2; i++) {
      const r = await req(server, 'GET', `/api/v1/paste.php?hash=${hash}`, { token: bob });
      assert.equal(Number(r.headers['content-length']), Buffer.byteLength(r.text));
      const p = r.json['paste'] as Record<string, unknown>;
      assert.deepEqual([p['content'], p['title'], p['view_count'], p['hash']], [big, 't', i + 1, hash]);
    }
    await req(server, 'POST', '/api/v1/paste_edit.php', { token: alice, body: { hash, content: `${big}tail` } });
    const p = (await req(server, 'GET', `/api/v1/paste.php?hash=${hash}`, { token: bob })).json['paste'] as Record<
      string,
      unknown
    >;
    assert.equal(p['content'], `${big}tail`);
  });

  test('paste.php escapes short content that JSON must escape, and its length holds as the view count grows a digit', async () => {
    const tricky = '"q" \\ </script> \u0000\u001f \u2028\u2029 é ✓ 😀\n\t';
    const hash = await create({ content: tricky, title: 'tïtle ✓ "q"' });
    // The length is summed from sizes measured once per version, plus the count's digits.
    for (let i = 0; i < 11; i++) {
      const r = await req(server, 'GET', `/api/v1/paste.php?hash=${hash}`, { token: bob });
      assert.equal(Number(r.headers['content-length']), Buffer.byteLength(r.text));
      const p = r.json['paste'] as Record<string, unknown>;
      assert.deepEqual([p['content'], p['title'], p['view_count']], [tricky, 'tïtle ✓ "q"', i + 1]);
    }
  });
});

describe('answers no shared cache may keep', () => {
  test('every API answer says no-store; raw.php runs nothing of a user’s text (CSP sandbox)', async () => {
    const hash = await create({ content: '<script>alert(1)</script>' });
    const raw = await req(server, 'GET', `/api/v1/raw.php?hash=${hash}&token=${bob}`);
    assert.equal(raw.status, 200);
    assert.equal(raw.headers['cache-control'], 'no-store');
    assert.equal(raw.headers['content-security-policy'], 'sandbox');
    assert.equal(raw.headers['x-content-type-options'], 'nosniff');
    for (const r of [
      await req(server, 'GET', `/api/v1/paste.php?hash=${hash}`, { token: bob }),
      await req(server, 'GET', '/api/v1/paste.php?hash=AAAAAAAAAA'),
    ]) {
      assert.equal(r.headers['cache-control'], 'no-store', String(r.status));
    }
  });
});
