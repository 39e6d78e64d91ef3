import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { connect } from 'node:net';
import { before, describe, test } from 'node:test';
import { type AppServer, makeToken, req, type Res, startServer } from '../../helpers/server.ts';
import { spooledUploads, storedFileBytes } from '../../helpers/stored.ts';
import { until } from '../../helpers/until.ts';
import { multipart } from '../../helpers/multipart-body.ts';
import { registerAll, WebClient } from '../../helpers/web-client.ts';

const sha = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

/** The smallest PNG's leading bytes and a little more: what the server looks at to serve it inline. */
const PNG = Buffer.concat([
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]),
  Buffer.from('IHDR fake image body'),
]);
const SVG = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>');
const HTML = Buffer.from('<html><script>alert(document.cookie)</script></html>');

let server: AppServer;
let token: string;
let other: string;

const LIMITS = { MAX_FILE_BYTES: '65536', MAX_FILES_PER_PASTE: '3', USER_QUOTA_BYTES: '200000' };

before(async () => {
  server = await startServer({ env: LIMITS });
  token = await makeToken(server.dataDir, { user: 'alice' });
  other = await makeToken(server.dataDir, { user: 'bob' });
});

function send(path: string, m: { body: Buffer; type: string }, as = token, headers: Record<string, string> = {}) {
  return req(server, 'POST', path, { token: as, body: m.body, headers: { 'content-type': m.type, ...headers } });
}

async function createWith(
  fields: Record<string, string>,
  files: { name: string; bytes: Buffer; type?: string }[],
  as = token,
): Promise<string> {
  const r = await send('/api/v1/paste_create.php', multipart(fields, files), as);
  assert.equal(r.status, 200, r.text);
  return r.json['hash'] as string;
}

const file = (hash: string, name: string, as: string | undefined = token, query = ''): Promise<Res> =>
  req(server, 'GET', `/api/v1/file.php?hash=${hash}&name=${encodeURIComponent(name)}${query}`, {
    ...(as === undefined ? {} : { token: as }),
  });

/** Runs the upkeep once a minute later on the server's clock, as its timer would (the file sweep with it). */
async function sweep(): Promise<void> {
  server.clock.advance(61_000);
  await server.upkeep();
}

describe('multipart create and file.php', () => {
  test('a create with two files and empty content lists them in paste.php and serves their bytes', async () => {
    const log = Buffer.from('line one\nline two\n'.repeat(500));
    const hash = await createWith({ title: 'shots', content: '' }, [
      { name: 'shot.png', bytes: PNG, type: 'image/png' },
      { name: 'build.log', bytes: log, type: 'text/plain' },
    ]);
    const got = await req(server, 'GET', `/api/v1/paste.php?hash=${hash}`, { token });
    assert.equal(got.status, 200, got.text);
    const paste = got.json['paste'] as Record<string, unknown>;
    assert.equal(paste['content'], '');
    assert.deepEqual(paste['files'], [
      { name: 'shot.png', size: PNG.length, type: 'image/png', sha256: sha(PNG) },
      { name: 'build.log', size: log.length, type: 'text/plain', sha256: sha(log) },
    ]);
    const png = await file(hash, 'shot.png');
    assert.equal(png.status, 200);
    assert.deepEqual(png.body, PNG);
    const text = await file(hash, 'build.log');
    assert.deepEqual(text.body, log);
    assert.equal(text.headers['content-type'], 'application/octet-stream');
  });

  test('a paste without files lists none', async () => {
    const c = await req(server, 'POST', '/api/v1/paste_create.php', { token, body: { content: 'x' } });
    const got = await req(server, 'GET', `/api/v1/paste.php?hash=${c.json['hash']}`, { token });
    assert.deepEqual((got.json['paste'] as Record<string, unknown>)['files'], []);
  });

  test('a multipart create with neither content nor files is refused', async () => {
    const r = await send('/api/v1/paste_create.php', multipart({ title: 'nothing' }));
    assert.equal(r.status, 400, r.text);
  });

  test('files are never a page of ours: nosniff, sandbox, inline only for an image whose bytes are one', async () => {
    const hash = await createWith({ content: 'hostile' }, [
      { name: 'real.png', bytes: PNG, type: 'image/png' },
      { name: 'evil.svg', bytes: SVG, type: 'image/svg+xml' },
      { name: 'page.png', bytes: HTML, type: 'image/png' },
    ]);
    const png = await file(hash, 'real.png');
    const head = await req(server, 'HEAD', `/api/v1/file.php?hash=${hash}&name=real.png`, { token });
    assert.equal(head.status, 200);
    assert.equal(head.headers['content-length'], String(PNG.length));
    assert.equal(head.body.length, 0);
    assert.equal(png.headers['x-content-type-options'], 'nosniff');
    assert.equal(png.headers['content-security-policy'], 'sandbox');
    assert.equal(png.headers['content-type'], 'image/png');
    assert.match(String(png.headers['content-disposition']), /^inline;/);
    for (const name of ['evil.svg', 'page.png']) {
      const r = await file(hash, name);
      assert.equal(r.status, 200);
      assert.equal(r.headers['content-type'], 'application/octet-stream', name);
      assert.equal(r.headers['content-security-policy'], 'sandbox');
      assert.equal(r.headers['x-content-type-options'], 'nosniff');
      assert.match(String(r.headers['content-disposition']), /^attachment; filename="[^"]*"; filename\*=UTF-8''/);
    }
  });

  test('a hostile name is kept as given and goes out only percent-encoded or with its quotes replaced', async () => {
    const name = '<img src=x onerror=alert(1)>".png';
    const hash = await createWith({ content: 'x' }, [{ name, bytes: HTML, type: 'image/png' }]);
    const got = await req(server, 'GET', `/api/v1/paste.php?hash=${hash}`, { token });
    assert.equal(((got.json['paste'] as Record<string, unknown>)['files'] as { name: string }[])[0]?.name, name);
    const r = await file(hash, name);
    const cd = String(r.headers['content-disposition']);
    assert.equal(
      cd,
      `attachment; filename="<img src=x onerror=alert(1)>_.png"; filename*=UTF-8''${encodeURIComponent(name).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)}`,
    );
    const utf = await createWith({ content: 'x' }, [{ name: 'résumé ✓.txt', bytes: Buffer.from('hi') }]);
    const u = await file(utf, 'résumé ✓.txt');
    assert.equal(
      u.headers['content-disposition'],
      `attachment; filename="r_sum_ _.txt"; filename*=UTF-8''r%C3%A9sum%C3%A9%20%E2%9C%93.txt`,
    );
  });

  test('names that are paths, hold control characters, are too long or repeat are refused with 400', async () => {
    for (const name of ['../etc/passwd', 'a/b', 'nul\u0001.txt', `${'é'.repeat(128)}.txt`]) {
      const r = await send(
        '/api/v1/paste_create.php',
        multipart({ content: 'x' }, [{ name, bytes: Buffer.from('1') }]),
      );
      assert.equal(r.status, 400, `${name}: ${r.text}`);
    }
    const twice = await send(
      '/api/v1/paste_create.php',
      multipart({ content: 'x' }, [
        { name: 'a.txt', bytes: Buffer.from('1') },
        { name: 'a.txt', bytes: Buffer.from('2') },
      ]),
    );
    assert.equal(twice.status, 400, twice.text);
    assert.deepEqual(await spooledUploads(server.dataDir), []);
  });

  test('the rest of the hostile-file corpus: a GIF/JS polyglot, a right-to-left override, NUL, exactly 255 bytes', async () => {
    // A GIF whose bytes are also a script: served as the image it begins as, never as script (nosniff).
    const polyglot = Buffer.from('GIF89a/*\x00\x00*/=1;alert(document.domain)//');
    const gifs = await createWith({ content: 'x' }, [
      { name: 'cat.gif', bytes: polyglot, type: 'image/gif' },
      { name: 'cat.js', bytes: polyglot, type: 'application/javascript' },
    ]);
    for (const name of ['cat.gif', 'cat.js']) {
      const r = await file(gifs, name);
      assert.equal(r.status, 200, name);
      assert.equal(r.headers['content-type'], 'image/gif', name);
      assert.equal(r.headers['x-content-type-options'], 'nosniff', name);
      assert.equal(r.headers['content-security-policy'], 'sandbox', name);
    }
    // A right-to-left override is kept for display, isolated on the page, and never sent raw in a header.
    const rtl = 'invoice\u202Egpj.exe';
    const h = await createWith({ content: 'x' }, [{ name: rtl, bytes: Buffer.from('MZ') }]);
    const cd = String((await file(h, rtl)).headers['content-disposition']);
    assert.match(cd, /^attachment; filename="invoice_gpj\.exe"; filename\*=UTF-8''invoice%E2%80%AEgpj\.exe$/);
    const page = await req(server, 'GET', `/p/${h}`);
    assert.ok(page.text.includes(`<bdi>${rtl}</bdi>`), 'the name is isolated from the text around it');
    // NUL is a control character: refused, as a name one byte over the bound.
    for (const name of ['a\u0000b.txt', `${'a'.repeat(252)}.txt`]) {
      const r = await send(
        '/api/v1/paste_create.php',
        multipart({ content: 'x' }, [{ name, bytes: Buffer.from('1') }]),
      );
      assert.equal(r.status, 400, `${JSON.stringify(name.slice(0, 12))}: ${r.text}`);
    }
    const longest = `${'a'.repeat(251)}.txt`;
    assert.equal(Buffer.byteLength(longest), 255);
    const kept = await createWith({ content: 'x' }, [{ name: longest, bytes: Buffer.from('1') }]);
    assert.equal((await file(kept, longest)).status, 200);
  });

  test('a file over MAX_FILE_BYTES is 413, and more files than MAX_FILES_PER_PASTE is 400', async () => {
    const big = await send(
      '/api/v1/paste_create.php',
      multipart({ content: 'x' }, [{ name: 'big.bin', bytes: Buffer.alloc(65_537, 1) }]),
    );
    assert.equal(big.status, 413, big.text);
    const many = await send(
      '/api/v1/paste_create.php',
      multipart(
        { content: 'x' },
        ['1', '2', '3', '4'].map((n) => ({ name: `${n}.txt`, bytes: Buffer.from(n) })),
      ),
    );
    assert.equal(many.status, 400, many.text);
    await until(async () => (await spooledUploads(server.dataDir)).length === 0, {
      what: 'the refused uploads removed',
    });
  });

  test('a body declared larger than every file together is refused before it is read', async () => {
    const r = await req(server, 'POST', '/api/v1/paste_create.php', {
      token,
      body: Buffer.from('--x--\r\n'),
      headers: { 'content-type': 'multipart/form-data; boundary=x', 'content-length': String(10_000_000) },
    }).catch((err: unknown) => err);
    // The server answers at once and closes: either the 413 arrived, or the socket was cut.
    if (!(r instanceof Error)) assert.equal((r as Res).status, 413);
  });

  test("a user's files past USER_QUOTA_BYTES are refused with 413 quota_exceeded", async () => {
    const quota = await makeToken(server.dataDir, { user: 'carol' });
    const chunk = Buffer.alloc(60_000, 7);
    await createWith({ content: 'a' }, [{ name: '1.bin', bytes: chunk }], quota);
    await createWith({ content: 'b' }, [{ name: '2.bin', bytes: Buffer.alloc(60_000, 8) }], quota);
    await createWith({ content: 'c' }, [{ name: '3.bin', bytes: Buffer.alloc(60_000, 9) }], quota);
    const r = await send(
      '/api/v1/paste_create.php',
      multipart({ content: 'd' }, [{ name: '4.bin', bytes: Buffer.alloc(60_000, 10) }]),
      quota,
    );
    assert.equal(r.status, 413, r.text);
    assert.equal(r.json['code'], 'quota_exceeded');
  });

  test("a private or password paste's file is refused without the right token or password", async () => {
    const priv = await createWith({ content: 'p', privacy: 'private' }, [
      { name: 'a.txt', bytes: Buffer.from('secret') },
    ]);
    assert.equal((await file(priv, 'a.txt', other)).status, 404);
    assert.equal((await file(priv, 'a.txt')).status, 200);
    const locked = await createWith({ content: 'p', password: 'hunter22' }, [
      { name: 'a.txt', bytes: Buffer.from('locked') },
    ]);
    assert.equal((await file(locked, 'a.txt', other)).status, 401);
    assert.equal((await file(locked, 'a.txt', other, '&password=wrong')).status, 403);
    const right = await file(locked, 'a.txt', other, '&password=hunter22');
    assert.equal(right.status, 200);
    assert.equal(right.text, 'locked');
    assert.equal((await file(locked, 'nope.txt', other, '&password=hunter22')).status, 404);
  });

  test("a one-time paste's files are not served, and are gone once it is read", async () => {
    const once = await createWith({ content: 'burn', burn_after_read: '1' }, [
      { name: 'a.txt', bytes: Buffer.from('b') },
    ]);
    assert.equal((await file(once, 'a.txt')).status, 403);
    const read = await req(server, 'GET', `/api/v1/paste.php?hash=${once}`, { token: other });
    assert.equal(read.status, 200);
    assert.equal((await file(once, 'a.txt')).status, 410);
  });
});

describe('Idempotency-Key', () => {
  test('a retry with the same files answers the same paste; other files under the same key are 422', async () => {
    const m = () => multipart({ content: 'k' }, [{ name: 'a.txt', bytes: Buffer.from('same') }]);
    const key = { 'idempotency-key': `files-${Math.random()}` };
    const first = await send('/api/v1/paste_create.php', m(), token, key);
    const again = await send('/api/v1/paste_create.php', m(), token, key);
    assert.equal(first.status, 200, first.text);
    assert.equal(again.json['hash'], first.json['hash']);
    const other = multipart({ content: 'k' }, [{ name: 'a.txt', bytes: Buffer.from('other') }]);
    assert.equal((await send('/api/v1/paste_create.php', other, token, key)).status, 422);
    await until(async () => (await spooledUploads(server.dataDir)).length === 0, {
      what: "the retries' uploads removed",
    });
  });
});

describe('storage', () => {
  test("a deleted paste's file is 404 at once, and its bytes go with the sweep", async () => {
    const bytes = Buffer.from(`only here ${Math.random()}`);
    const hash = await createWith({ content: 'x' }, [{ name: 'a.txt', bytes }]);
    assert.ok((await storedFileBytes(server.dataDir)).includes(sha(bytes)));
    const del = await req(server, 'POST', '/api/v1/paste_delete.php', { token, body: { hash } });
    assert.equal(del.status, 200);
    assert.equal((await file(hash, 'a.txt')).status, 404);
    await sweep();
    assert.ok(!(await storedFileBytes(server.dataDir)).includes(sha(bytes)));
  });

  test('a file read again comes from memory alike, HEAD included; its paste deleted, it is 404 at once', async () => {
    const bytes = Buffer.concat([PNG, Buffer.from(` held ${Math.random()}`)]);
    const hash = await createWith({ content: 'x' }, [{ name: 'a.png', bytes }]);
    const first = await file(hash, 'a.png');
    const again = await file(hash, 'a.png');
    assert.deepEqual(again.body, bytes);
    for (const h of ['content-type', 'content-length', 'content-disposition', 'content-security-policy'])
      assert.equal(again.headers[h], first.headers[h], h);
    const head = await req(server, 'HEAD', `/api/v1/file.php?hash=${hash}&name=a.png`, { token });
    assert.equal(head.status, 200);
    assert.equal(head.headers['content-length'], String(bytes.length));
    assert.equal(head.body.length, 0);
    const del = await req(server, 'POST', '/api/v1/paste_delete.php', { token, body: { hash } });
    assert.equal(del.status, 200);
    assert.equal((await file(hash, 'a.png')).status, 404);
    assert.equal((await req(server, 'GET', `/p/${hash}/files/a.png`, {})).status, 404);
    await sweep();
    assert.ok(!(await storedFileBytes(server.dataDir)).includes(sha(bytes)));
  });

  test('bytes two pastes hold are stored once and kept until both are gone', async () => {
    const bytes = Buffer.from(`shared ${Math.random()}`);
    const a = await createWith({ content: 'a' }, [{ name: 'a.txt', bytes }]);
    const b = await createWith({ content: 'b' }, [{ name: 'b.txt', bytes }], other);
    assert.equal((await storedFileBytes(server.dataDir)).filter((s) => s === sha(bytes)).length, 1);
    await req(server, 'POST', '/api/v1/paste_delete.php', { token, body: { hash: a } });
    await sweep();
    assert.ok((await storedFileBytes(server.dataDir)).includes(sha(bytes)));
    assert.deepEqual((await file(b, 'b.txt', other)).body, bytes);
    await req(server, 'POST', '/api/v1/paste_delete.php', { token: other, body: { hash: b } });
    await sweep();
    assert.ok(!(await storedFileBytes(server.dataDir)).includes(sha(bytes)));
  });

  test("an expired paste's file is 410 at once, and its bytes go with the sweep", async () => {
    const bytes = Buffer.from(`expiring ${Math.random()}`);
    const hash = await createWith({ content: 'x', expiry: '10m' }, [{ name: 'a.txt', bytes }]);
    server.clock.advance(11 * 60_000);
    assert.equal((await file(hash, 'a.txt')).status, 410);
    // The expiry sweep wipes it and the file sweep, beside it in the upkeep, takes its bytes:
    // a round or two, as the two run side by side (one may still be under way from the timer).
    let rounds = 0;
    while ((await storedFileBytes(server.dataDir)).includes(sha(bytes)) && rounds < 5) {
      await sweep();
      rounds++;
    }
    assert.ok(!(await storedFileBytes(server.dataDir)).includes(sha(bytes)), 'the bytes outlived five rounds');
  });

  test('an upload cut short leaves no spooled file behind', async () => {
    const boundary = 'cut';
    const head = Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\n\r\n`,
    );
    const socket = connect(server.port, '127.0.0.1');
    await new Promise<void>((resolve) => socket.once('connect', resolve));
    socket.write(
      `POST /api/v1/paste_create.php HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: 60000\r\n\r\n`,
    );
    socket.write(head);
    socket.write(Buffer.alloc(30_000, 3));
    await until(async () => (await spooledUploads(server.dataDir)).length > 0, { what: 'the upload spooled' });
    socket.destroy();
    await until(async () => (await spooledUploads(server.dataDir)).length === 0, { what: 'the cut upload removed' });
  });
});

describe('paste_edit.php with files', () => {
  test('adds and removes files; the revision and If-Match cover the file list', async () => {
    const one = Buffer.from(`one ${Math.random()}`);
    const two = Buffer.from(`two ${Math.random()}`);
    const hash = await createWith({ content: 'x' }, [{ name: 'one.txt', bytes: one }]);
    const first = await req(server, 'GET', `/api/v1/paste.php?hash=${hash}`, { token });
    const etag = String(first.headers['etag']);
    const add = await send('/api/v1/paste_edit.php', multipart({ hash }, [{ name: 'two.txt', bytes: two }]), token, {
      'if-match': etag,
    });
    assert.equal(add.status, 200, add.text);
    const after = await req(server, 'GET', `/api/v1/paste.php?hash=${hash}`, { token });
    const files = (after.json['paste'] as Record<string, unknown>)['files'] as { name: string }[];
    assert.deepEqual(
      files.map((f) => f.name),
      ['one.txt', 'two.txt'],
    );
    assert.equal((after.json['paste'] as Record<string, unknown>)['content'], 'x');
    // The old ETag names the old revision: a write meant for it is refused.
    const stale = await send('/api/v1/paste_edit.php', multipart({ hash, remove_file: 'one.txt' }), token, {
      'if-match': etag,
    });
    assert.equal(stale.status, 412);
    const taken = await send('/api/v1/paste_edit.php', multipart({ hash }, [{ name: 'two.txt', bytes: one }]));
    assert.equal(taken.status, 400, taken.text);
    const missing = await send('/api/v1/paste_edit.php', multipart({ hash, remove_file: 'none.txt' }));
    assert.equal(missing.status, 400, missing.text);
    const removed = await send('/api/v1/paste_edit.php', multipart({ hash, remove_file: ['one.txt', 'two.txt'] }));
    assert.equal(removed.status, 200, removed.text);
    const now = await req(server, 'GET', `/api/v1/paste.php?hash=${hash}`, { token });
    assert.deepEqual((now.json['paste'] as Record<string, unknown>)['files'], []);
    assert.equal((await file(hash, 'one.txt')).status, 404);
    // The earlier revision still lists it, so its bytes stay while that revision is kept.
    const old = await req(server, 'GET', `/api/v1/paste.php?hash=${hash}&revision=1`, { token });
    assert.equal(((old.json['paste'] as Record<string, unknown>)['files'] as unknown[]).length, 1);
    await sweep();
    assert.ok((await storedFileBytes(server.dataDir)).includes(sha(one)));
    await req(server, 'POST', '/api/v1/paste_delete.php', { token, body: { hash } });
    await sweep();
    const left = await storedFileBytes(server.dataDir);
    assert.ok(!left.includes(sha(one)) && !left.includes(sha(two)));
  });

  test('an edit may empty the content of a paste that keeps files, not of one without', async () => {
    const hash = await createWith({ content: 'x' }, [{ name: 'k.txt', bytes: Buffer.from('k') }]);
    const r = await send('/api/v1/paste_edit.php', multipart({ hash, content: '' }));
    assert.equal(r.status, 200, r.text);
    const both = await send('/api/v1/paste_edit.php', multipart({ hash, remove_file: 'k.txt' }));
    assert.equal(both.status, 400, both.text);
  });
});

describe('the default limits', () => {
  test('a 5 MB log and a PNG round-trip byte for byte; a file one byte past MAX_FILE_BYTES is 413', async () => {
    const plain = await startServer();
    const t = await makeToken(plain.dataDir, { user: 'dora' });
    const log = Buffer.alloc(5 * 1_048_576);
    for (let i = 0; i < log.length; i++) log[i] = 32 + ((i * 7919) % 95);
    const m = multipart({ title: 'big' }, [
      { name: 'shot.png', bytes: PNG, type: 'image/png' },
      { name: 'big.log', bytes: log, type: 'text/plain' },
    ]);
    const c = await req(plain, 'POST', '/api/v1/paste_create.php', {
      token: t,
      body: m.body,
      headers: { 'content-type': m.type },
    });
    assert.equal(c.status, 200, c.text);
    const hash = c.json['hash'] as string;
    const got = await req(plain, 'GET', `/api/v1/file.php?hash=${hash}&name=big.log`, { token: t });
    assert.equal(got.body.length, log.length);
    assert.ok(got.body.equals(log), 'the 5 MB file comes back byte for byte');
    const png = await req(plain, 'GET', `/api/v1/file.php?hash=${hash}&name=shot.png`, { token: t });
    assert.ok(png.body.equals(PNG));
    const over = multipart({ content: 'x' }, [{ name: 'over.bin', bytes: Buffer.alloc(10_485_761) }]);
    const r = await req(plain, 'POST', '/api/v1/paste_create.php', {
      token: t,
      body: over.body,
      headers: { 'content-type': over.type },
    }).catch((err: unknown) => err);
    // Refused as soon as the part passes the limit: the 413 may come while the body is still being sent.
    if (!(r instanceof Error)) assert.equal((r as Res).status, 413);
    await until(async () => (await spooledUploads(plain.dataDir)).length === 0, { what: 'the refused upload removed' });
  });
});

describe('anonymous creates', () => {
  test('take files only with ANONYMOUS_FILES=1 (403 otherwise)', async () => {
    const closed = await startServer({ env: { ANONYMOUS_PASTES: '1' } });
    const m = multipart({ content: 'x' }, [{ name: 'a.txt', bytes: Buffer.from('a') }]);
    const r = await req(closed, 'POST', '/api/v1/paste_create.php', {
      body: m.body,
      headers: { 'content-type': m.type },
    });
    assert.equal(r.status, 403, r.text);
    const open = await startServer({ env: { ANONYMOUS_PASTES: '1', ANONYMOUS_FILES: '1' } });
    const ok = await req(open, 'POST', '/api/v1/paste_create.php', {
      body: m.body,
      headers: { 'content-type': m.type },
    });
    assert.equal(ok.status, 200, ok.text);
  });
});

describe('the web page and /p/{hash}/files/{name}', () => {
  test('the page lists the files, names escaped, images inline, under the same strict CSP', async () => {
    const name = '<img src=x onerror=alert(1)>.png';
    const hash = await createWith({ content: 'see the files' }, [
      { name: 'shot.png', bytes: PNG, type: 'image/png' },
      { name, bytes: HTML, type: 'image/png' },
      { name: 'notes.txt', bytes: Buffer.from('n'.repeat(2048)), type: 'text/plain' },
    ]);
    const page = await new WebClient(server).get(`/p/${hash}`);
    assert.equal(page.status, 200);
    assert.ok(page.text.includes('code-card'), 'a paste with text shows it');
    assert.match(String(page.headers['content-security-policy']), /img-src 'self' data:;/);
    assert.ok(page.text.includes(`<img class="file-image" src="/p/${hash}/files/shot.png"`), 'the PNG is shown');
    assert.ok(page.text.includes(`href="/p/${hash}/files/notes.txt"`));
    assert.ok(page.text.includes('2.0 KiB'), 'sizes are shown');
    assert.ok(!page.text.includes('<img src=x onerror'), 'the hostile name is escaped');
    assert.ok(page.text.includes('&lt;img src=x onerror=alert(1)&gt;.png'));
    const served = await new WebClient(server).get(`/p/${hash}/files/${encodeURIComponent(name)}`);
    assert.equal(served.status, 200);
    assert.equal(served.headers['content-type'], 'application/octet-stream');
    assert.equal(served.headers['content-security-policy'], 'sandbox');
    assert.equal(served.headers['x-content-type-options'], 'nosniff');
    assert.match(
      String(served.headers['content-disposition']),
      /^attachment; filename="<img src=x onerror=alert\(1\)>\.png"/,
    );
    const png = await new WebClient(server).get(`/p/${hash}/files/shot.png`);
    assert.deepEqual(png.body, PNG);
    assert.equal(png.headers['content-type'], 'image/png');
  });

  test('text files are shown highlighted by their extension; others stay downloads with their size', async () => {
    // Limits of their own: a file past the page's bound is larger than this file's servers take.
    const s = await startServer({ env: { MAX_FILE_BYTES: '1048576' } });
    const m = multipart({ content: 'files' }, [
      { name: 'tool.py', bytes: Buffer.from('def main():\n    return 1 < 2\n') },
      { name: 'Makefile', bytes: Buffer.from('all:\n\techo <b>\n') },
      { name: 'bad.json', bytes: Buffer.from([0x7b, 0xff, 0xfe, 0x7d]) },
      { name: 'huge.ts', bytes: Buffer.from('const a = 1;\n'.repeat(21_000)) },
      { name: 'shot.png', bytes: PNG, type: 'image/png' },
    ]);
    const created = await req(s, 'POST', '/api/v1/paste_create.php', {
      token: await makeToken(s.dataDir, { user: 'erin' }),
      body: m.body,
      headers: { 'content-type': m.type },
    });
    assert.equal(created.status, 200, created.text);
    const hash = created.json['hash'] as string;
    const page = await new WebClient(s).get(`/p/${hash}`);
    await s.stop();
    assert.equal(page.status, 200);
    const item = (name: string): string => {
      const at = page.text.indexOf(`href="/p/${hash}/files/${encodeURIComponent(name)}"`);
      assert.ok(at > 0, `${name} is listed`);
      return page.text.slice(at, page.text.indexOf('</li>', at));
    };
    assert.match(item('tool.py'), /Python<\/span><div class="file-code"><pre class="code" id="file-code-0"/);
    assert.match(item('tool.py'), /<span class="tk-kw">def<\/span>/);
    assert.ok(item('tool.py').includes('</span> &lt; <span'), 'the text is escaped');
    assert.match(item('Makefile'), /Makefile<\/span><div class="file-code">/);
    assert.ok(item('Makefile').includes('&lt;b&gt;'));
    assert.ok(!item('Makefile').includes('<b>'));
    assert.ok(!item('bad.json').includes('file-code'), 'bytes that are not UTF-8 stay a download');
    assert.ok(!item('huge.ts').includes('file-code'), 'a file past the bound stays a download');
    assert.ok(item('huge.ts').includes('266.6 KiB'));
    assert.ok(item('shot.png').includes('<img class="file-image"'), 'images stay inline');
  });

  test('a paste of files alone shows no empty code block, and says how many files it holds', async () => {
    const hash = await createWith({ content: '' }, [{ name: 'only.txt', bytes: Buffer.from('o') }]);
    const page = await new WebClient(server).get(`/p/${hash}`);
    assert.equal(page.status, 200);
    assert.ok(!page.text.includes('code-card'), 'no code block');
    assert.match(page.text, /<p class="lede">1 file<\/p>/);
  });

  test("a private paste's file is 404 to others; a password paste's opens after its unlock", async () => {
    const priv = await createWith({ content: 'p', privacy: 'private' }, [{ name: 'a.txt', bytes: Buffer.from('s') }]);
    assert.equal((await new WebClient(server).get(`/p/${priv}/files/a.txt`)).status, 404);
    const locked = await createWith({ content: 'p', password: 'hunter22' }, [
      { name: 'a.txt', bytes: Buffer.from('locked') },
    ]);
    const c = new WebClient(server);
    const gate = await c.get(`/p/${locked}/files/a.txt`);
    assert.equal(gate.status, 401);
    assert.ok(gate.text.includes(`action="/p/${locked}"`));
    const unlocked = await c.post(`/p/${locked}`, { password: 'hunter22' });
    assert.equal(unlocked.status, 200, unlocked.text.slice(0, 300));
    const got = await c.get(`/p/${locked}/files/a.txt`);
    assert.equal(got.status, 200);
    assert.equal(got.text, 'locked');
    assert.equal((await new WebClient(server).get(`/p/${locked}/files/a.txt`)).status, 401);
  });
});

describe('burn after reading: the grant of each file', () => {
  /** The path and query of an absolute address the server handed out. */
  const local = (url: unknown): string => {
    const u = new URL(String(url));
    return u.pathname + u.search;
  };
  const get = (path: string, as: string | undefined = other): Promise<Res> =>
    req(server, 'GET', path, as === undefined ? {} : { token: as });

  test('the reader who burns it fetches each file once; nobody else, no grant twice', async () => {
    const log = Buffer.from(`log ${Math.random()}\n`.repeat(50));
    const burn = await createWith({ content: 'once', burn_after_read: '1' }, [
      { name: 'run.log', bytes: log },
      { name: 'shot.png', bytes: PNG, type: 'image/png' },
    ]);
    const read = await get(`/api/v1/paste.php?hash=${burn}`);
    assert.equal(read.status, 200, read.text);
    const files = (read.json['paste'] as { files: { name: string; url: string }[] }).files;
    assert.deepEqual(
      files.map((f) => f.name),
      ['run.log', 'shot.png'],
    );
    const [logUrl, pngUrl] = files.map((f) => local(f.url)) as [string, string];
    assert.match(logUrl, new RegExp(`^/api/v1/file\\.php\\?hash=${burn}&name=run\\.log&grant=[A-Za-z0-9_-]{43}$`));
    // Without the grant, and with another file's, nobody gets them.
    assert.equal((await file(burn, 'run.log', other)).status, 410);
    const swapped = await get(logUrl.replace('name=run.log', 'name=shot.png'));
    assert.equal(swapped.status, 403);
    assert.equal(swapped.json['code'], 'forbidden');
    assert.equal((await get(`${logUrl.slice(0, -5)}AAAAA`)).status, 403);
    // A HEAD spends nothing; the first GET gets the bytes, with no cache keeping them.
    assert.equal((await req(server, 'HEAD', logUrl, { token: other })).status, 200);
    const got = await get(logUrl);
    assert.equal(got.status, 200);
    assert.deepEqual(got.body, log);
    assert.equal(got.headers['cache-control'], 'no-store');
    assert.equal((await get(logUrl)).status, 403, 'a grant is good once');
    assert.equal((await get(logUrl, token)).status, 403, 'for anyone');
    const png = await get(pngUrl, token);
    assert.equal(png.status, 200);
    assert.deepEqual(png.body, PNG);
    assert.equal((await get(pngUrl)).status, 403);
  });

  test('the bytes stay through the sweep until fetched or the grant ends, then go', async () => {
    const kept = Buffer.from(`kept for the grant ${Math.random()}`);
    const unread = Buffer.from(`never fetched ${Math.random()}`);
    const burn = await createWith({ content: 'once', burn_after_read: '1' }, [
      { name: 'kept.txt', bytes: kept },
      { name: 'unread.txt', bytes: unread },
    ]);
    // raw.php has no room in its text for the files: it links them (RFC 8288).
    const raw = await get(`/api/v1/raw.php?hash=${burn}`);
    assert.equal(raw.status, 200);
    assert.equal(raw.text, 'once');
    const links = [...String(raw.headers['link']).matchAll(/<([^>]+)>; rel="enclosure"; title\*=UTF-8''([^,]+)/g)];
    assert.deepEqual(
      links.map((m) => m[2]),
      ['kept.txt', 'unread.txt'],
    );
    await sweep();
    const stored = await storedFileBytes(server.dataDir);
    assert.ok(stored.includes(sha(kept)) && stored.includes(sha(unread)), 'the sweep leaves granted bytes');
    const got = await get(local(links[0]?.[1]));
    assert.deepEqual(got.body, kept);
    // A fetched file's bytes go once its answer had time to be sent; the other waits for its grant.
    await sweep();
    assert.ok(!(await storedFileBytes(server.dataDir)).includes(sha(kept)), 'fetched bytes go');
    assert.ok((await storedFileBytes(server.dataDir)).includes(sha(unread)));
    server.clock.advance(10 * 60_000);
    assert.equal((await get(local(links[1]?.[1]))).status, 403, 'the grant ended');
    await sweep();
    assert.ok(!(await storedFileBytes(server.dataDir)).includes(sha(unread)), 'unfetched bytes go with the grant');
  });

  test('the page that burns it links each file with its grant, once', async () => {
    const bytes = Buffer.from(`page ${Math.random()}`);
    const burn = await createWith({ content: 'once', burn_after_read: '1' }, [
      { name: 'a b.txt', bytes },
      { name: 'shot.png', bytes: PNG, type: 'image/png' },
    ]);
    const c = new WebClient(server);
    const warning = await c.get(`/p/${burn}`);
    assert.ok(!warning.text.includes('/files/'), 'the warning links no file');
    const page = await c.post(`/p/${burn}`, {});
    assert.equal(page.status, 200);
    const hrefs = [...page.text.matchAll(/href="(\/p\/\w+\/files\/[^"]+)"/g)].map((m) =>
      (m[1] as string).replaceAll('&amp;', '&'),
    );
    assert.equal(hrefs.length, 2);
    assert.match(hrefs[0] as string, new RegExp(`^/p/${burn}/files/a%20b\\.txt\\?grant=[A-Za-z0-9_-]{43}$`));
    assert.ok(!page.text.includes('<img class="file-image"'), 'no image spends its grant in the page');
    assert.equal((await new WebClient(server).get(`/p/${burn}/files/a%20b.txt`)).status, 410);
    const got = await new WebClient(server).get(hrefs[0] as string);
    assert.equal(got.status, 200);
    assert.deepEqual(got.body, bytes);
    assert.equal((await new WebClient(server).get(hrefs[0] as string)).status, 403);
    assert.deepEqual((await c.get(hrefs[1] as string)).body, PNG);
  });
});

describe('the quota shown', () => {
  test("the account page shows the user's stored bytes against USER_QUOTA_BYTES; admin Users each user's total", async () => {
    const s = await startServer({ env: { ...LIMITS, OPEN_REGISTRATION: '1' } });
    try {
      const [admin, dana] = await registerAll(s, 'root', 'dana');
      const danaToken = await makeToken(s.dataDir, { user: 'dana' });
      const upload = async (fields: Record<string, string>, sizes: number[]): Promise<string> => {
        const m = multipart(
          fields,
          sizes.map((n, i) => ({ name: `f${i}.bin`, bytes: Buffer.alloc(n, i + 1) })),
        );
        const r = await req(s, 'POST', '/api/v1/paste_create.php', {
          token: danaToken,
          body: m.body,
          headers: { 'content-type': m.type },
        });
        assert.equal(r.status, 200, r.text);
        return r.json['hash'] as string;
      };
      await upload({ content: 'a' }, [1024, 2048]);
      const once = await upload({ content: 'b', burn_after_read: '1' }, [4096]);
      const before = await dana.get('/account');
      assert.equal(before.status, 200);
      assert.match(before.text, /take <strong>7\.0 KiB<\/strong> of your <strong>195\.3 KiB<\/strong> \(3%\)/);
      assert.match(before.text, /<progress class="quota" value="7168" max="200000"/);
      // A burned paste's files are going: they no longer count.
      assert.equal((await req(s, 'GET', `/api/v1/raw.php?hash=${once}`, { token: danaToken })).status, 200);
      assert.match((await dana.get('/account')).text, /take <strong>3\.0 KiB<\/strong>/);
      const users = await admin.get('/admin/users');
      assert.equal(users.status, 200);
      assert.ok(users.text.includes('<th>Files</th>'));
      const row = (name: string): string =>
        /<tr id="user-[^"]*">[\s\S]*?<\/tr>/g.exec(
          users.text.slice(users.text.indexOf(`id="user-${name}"`) - 8),
        )?.[0] ?? '';
      assert.match(row('dana'), /data-label="Files" class="num">3\.0 KiB</);
      assert.match(row('root'), /data-label="Files" class="num">0 bytes</);
    } finally {
      await s.stop();
    }
  });
});
