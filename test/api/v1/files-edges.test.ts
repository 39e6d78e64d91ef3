import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { type AppServer, makeToken, req, type Res, startServer } from '../../helpers/server.ts';
import { multipart, sendFiles } from '../../helpers/multipart.ts';
import { readZip } from '../../helpers/zip-reader.ts';

// What a client of the API meets at the edges of files (README, Files; docs/files.md): who may
// fetch one, how odd but legal multipart bodies are read, and what a refusal says.

let server: AppServer;
let token: string;
let other: string;

before(async () => {
  server = await startServer();
  token = await makeToken(server.dataDir, { user: 'alice' });
  other = await makeToken(server.dataDir, { user: 'bob' });
});

function send(path: string, m: { body: Buffer; type: string }, as: string | undefined = token): Promise<Res> {
  return req(server, 'POST', path, {
    ...(as === undefined ? {} : { token: as }),
    body: m.body,
    headers: { 'content-type': m.type },
  });
}

async function createWith(fields: Record<string, string>, files: { name: string; bytes: Buffer }[]): Promise<string> {
  const r = await sendFiles(server, token, fields, files);
  assert.equal(r.status, 200, r.text);
  return r.json['hash'] as string;
}

/** file.php as `as` (null: with no token at all). */
const file = (hash: string, name: string, as: string | null = token, query = ''): Promise<Res> =>
  req(server, 'GET', `/api/v1/file.php?hash=${hash}&name=${encodeURIComponent(name)}${query}`, {
    ...(as === null ? {} : { token: as }),
  });

describe('file.php asks for a token as paste.php does', () => {
  test('without one it is 401 before the paste is looked up, private or not; a grant alone is its key', async () => {
    const open = await createWith({ content: 'o' }, [{ name: 'a.txt', bytes: Buffer.from('open') }]);
    const priv = await createWith({ content: 'p', privacy: 'private' }, [{ name: 'a.txt', bytes: Buffer.from('p') }]);
    for (const hash of [open, priv, 'AAAAAAAAAA']) {
      const r = await file(hash, 'a.txt', null);
      assert.equal(r.status, 401, r.text);
      assert.equal(r.json['code'], 'unauthorized');
    }
    assert.equal((await file('bad', 'a.txt', null)).status, 401, 'authentication comes before the hash check');
    assert.equal((await file(open, 'a.txt', null, '&grant=')).status, 401, 'an empty grant is none');
    assert.equal((await file(open, 'a.txt', other)).text, 'open');
    // A burned paste's file: its grant, with no token at all.
    const once = await createWith({ content: 'b', burn_after_read: '1' }, [{ name: 'a.txt', bytes: Buffer.from('g') }]);
    const read = await req(server, 'GET', `/api/v1/paste.php?hash=${once}`, { token: other });
    const url = new URL(((read.json['paste'] as { files: { url: string }[] }).files[0] as { url: string }).url);
    const got = await req(server, 'GET', url.pathname + url.search, {});
    assert.equal(got.status, 200, got.text);
    assert.equal(got.text, 'g');
  });

  test("a one-time paste's file before its read is 403 saying how its files are had, not about revisions", async () => {
    const once = await createWith({ content: 'b', burn_after_read: '1' }, [{ name: 'a.txt', bytes: Buffer.from('g') }]);
    const r = await file(once, 'a.txt', other);
    assert.equal(r.status, 403, r.text);
    assert.equal(r.json['code'], 'forbidden');
    assert.match(r.json.error ?? '', /grant/);
    assert.doesNotMatch(r.json.error ?? '', /revision/);
  });
});

/** A multipart body written by hand, as odd but legal senders write one. */
const raw = (boundary: string, parts: string[], tail = '--\r\n'): Buffer =>
  Buffer.from(`${parts.map((p) => `--${boundary}\r\n${p}\r\n`).join('')}--${boundary}${tail}`, 'utf8');

describe('multipart bodies as clients send them', () => {
  test('a backslash in a filename is kept, as browsers and curl send it; \\" and \\\\ are escapes', async () => {
    const body = raw('xyz', [
      'Content-Disposition: form-data; name="file"; filename="C:\\Users\\me\\a.txt"\r\n\r\none',
      'Content-Disposition: form-data; name="file"; filename="say \\"hi\\" \\\\ b.txt"\r\n\r\ntwo',
    ]);
    const r = await send('/api/v1/paste_create.php', { body, type: 'multipart/form-data; boundary=xyz' });
    assert.equal(r.status, 200, r.text);
    const got = await req(server, 'GET', `/api/v1/paste.php?hash=${r.json['hash']}`, { token });
    const names = (got.json['paste'] as { files: { name: string }[] }).files.map((f) => f.name);
    assert.deepEqual(names, ['C:\\Users\\me\\a.txt', 'say "hi" \\ b.txt']);
    assert.equal((await file(r.json['hash'] as string, 'C:\\Users\\me\\a.txt')).text, 'one');
  });

  test('filename* in UTF-8 or ISO-8859-1 (RFC 5987 names both) wins over filename', async () => {
    const body = raw('xyz', [
      `Content-Disposition: form-data; name="file"; filename="plain.txt"; filename*=UTF-8''r%C3%A9sum%C3%A9%20%E2%82%AC.txt\r\n\r\none`,
      `Content-Disposition: form-data; name="file"; filename*=iso-8859-1'fr'caf%E9.txt\r\n\r\ntwo`,
    ]);
    const r = await send('/api/v1/paste_create.php', { body, type: 'multipart/form-data; boundary=xyz' });
    assert.equal(r.status, 200, r.text);
    const got = await req(server, 'GET', `/api/v1/paste.php?hash=${r.json['hash']}`, { token });
    const names = (got.json['paste'] as { files: { name: string }[] }).files.map((f) => f.name);
    assert.deepEqual(names, ['résumé €.txt', 'café.txt']);
  });

  test('multipart/form-data without a boundary is 400 saying so; another type names multipart among those taken', async () => {
    const body = raw('xyz', ['Content-Disposition: form-data; name="content"\r\n\r\nhi']);
    for (const type of [
      'multipart/form-data',
      'multipart/form-data; charset=utf-8',
      'multipart/form-data; boundary=',
    ]) {
      const r = await send('/api/v1/paste_create.php', { body, type });
      assert.equal(r.status, 400, `${type}: ${r.text}`);
      assert.match(r.json.error ?? '', /boundary/);
    }
    for (const path of ['/api/v1/paste_create.php', '/api/v1/paste_edit.php']) {
      const r = await send(path, { body, type: 'application/xml' });
      assert.equal(r.status, 415, r.text);
      assert.match(r.json.error ?? '', /multipart\/form-data/);
    }
    // paste_delete.php takes no files, and says nothing of multipart.
    const del = await send('/api/v1/paste_delete.php', { body, type: 'multipart/form-data; boundary=xyz' });
    assert.equal(del.status, 415, del.text);
    assert.doesNotMatch(del.json.error ?? '', /multipart/);
  });
});

describe('anonymous multipart creates without ANONYMOUS_FILES', () => {
  test('text parts alone make a paste; the first file part is 403 and keeps nothing', async () => {
    const anon = await startServer({ env: { ANONYMOUS_PASTES: '1' } });
    const post = (m: { body: Buffer; type: string }): Promise<Res> =>
      req(anon, 'POST', '/api/v1/paste_create.php', { body: m.body, headers: { 'content-type': m.type } });
    const text = await post(multipart({ content: 'only text', expiry: '1h' }));
    assert.equal(text.status, 200, text.text);
    const read = await req(anon, 'GET', `/api/v1/raw.php?hash=${text.json['hash']}`, {
      token: await makeToken(anon.dataDir, { user: 'carol' }),
    });
    assert.equal(read.text, 'only text');
    const withFile = await post(multipart({ content: 'x' }, [{ name: 'a.txt', bytes: Buffer.from('a') }]));
    assert.equal(withFile.status, 403, withFile.text);
    assert.match(withFile.json.error ?? '', /ANONYMOUS_FILES/);
  });
});

describe('file.php and revisions', () => {
  test('revision=N serves the file as that version held it, as paste.php?revision=N lists it', async () => {
    const hash = await createWith({ content: 'v1' }, [
      { name: 'a.txt', bytes: Buffer.from('first') },
      { name: 'gone.txt', bytes: Buffer.from('edited away') },
    ]);
    const edit = await send(
      '/api/v1/paste_edit.php',
      multipart({ hash, remove_file: ['a.txt', 'gone.txt'] }, [{ name: 'a.txt', bytes: Buffer.from('second') }]),
    );
    assert.equal(edit.status, 200, edit.text);
    assert.equal((await file(hash, 'a.txt')).text, 'second');
    assert.equal((await file(hash, 'a.txt', token, '&revision=2')).text, 'second');
    const old = await file(hash, 'a.txt', other, '&revision=1');
    assert.equal(old.status, 200, old.text);
    assert.equal(old.text, 'first');
    assert.equal((await file(hash, 'gone.txt', other, '&revision=1')).text, 'edited away');
    assert.equal((await file(hash, 'gone.txt')).status, 404);
    assert.equal((await file(hash, 'a.txt', token, '&revision=3')).status, 404);
    assert.equal((await file(hash, 'a.txt', token, '&revision=x')).status, 400);
  });
});

describe('file.php and ETags', () => {
  test("a file's ETag is its SHA-256; If-None-Match naming it is 304 after the read checks, on the page too", async () => {
    const hash = await createWith({ content: 'e', password: 'hunter22' }, [
      { name: 'a.txt', bytes: Buffer.from('etag me') },
    ]);
    const got = await file(hash, 'a.txt');
    const etag = got.headers['etag'];
    assert.match(String(etag), /^"[0-9a-f]{64}"$/);
    const held = { 'if-none-match': String(etag) };
    const again = await req(server, 'GET', `/api/v1/file.php?hash=${hash}&name=a.txt`, { token, headers: held });
    assert.equal(again.status, 304, again.text);
    assert.equal(again.body.length, 0);
    // The paste's password is still asked first.
    const other304 = await req(server, 'GET', `/api/v1/file.php?hash=${hash}&name=a.txt`, {
      token: other,
      headers: held,
    });
    assert.equal(other304.status, 401, other304.text);
    const changed = await req(server, 'GET', `/api/v1/file.php?hash=${hash}&name=a.txt`, {
      token,
      headers: { 'if-none-match': '"0000"' },
    });
    assert.equal(changed.status, 200);
    assert.equal(changed.text, 'etag me');
    const open = await createWith({ content: 'e' }, [{ name: 'a.txt', bytes: Buffer.from('etag me') }]);
    const page = await req(server, 'GET', `/p/${open}/files/a.txt`, { headers: held });
    assert.equal(page.status, 304, 'the same bytes, the same ETag, on the page');
  });
});

describe('a "file" part without a filename', () => {
  test('is 400 saying it needs one, not a text field ignored and "content is required"', async () => {
    const body = raw('xyz', ['Content-Disposition: form-data; name="file"\r\n\r\nhello']);
    const r = await send('/api/v1/paste_create.php', { body, type: 'multipart/form-data; boundary=xyz' });
    assert.equal(r.status, 400, r.text);
    assert.match(r.json.error ?? '', /filename/);
  });
});

describe('the zip of a paste whose names hold backslashes', () => {
  test('names no entry with a backslash, which some unzip tools take for a folder: each is kept apart', async () => {
    const hash = await createWith({ content: 'text', title: 'x_y' }, [
      { name: '..\\..\\run.bat', bytes: Buffer.from('one') },
      { name: 'a\\b.txt', bytes: Buffer.from('two') },
      { name: 'a_b.txt', bytes: Buffer.from('three') },
    ]);
    const got = await req(server, 'GET', `/p/${hash}/files.zip`);
    assert.equal(got.status, 200, got.text);
    const entries = readZip(got.body);
    const names = entries.map((e) => e.name);
    assert.ok(
      names.every((n) => !n.includes('\\') && !n.includes('/')),
      names.join(' | '),
    );
    assert.equal(new Set(names).size, names.length, 'no two entries share a name');
    assert.deepEqual(
      entries.map((e) => e.bytes.toString()),
      ['text', 'one', 'two', 'three'],
    );
    assert.equal(names[3], 'a_b.txt', 'a name without a backslash is kept as it is');
  });
});

describe('an edit past MAX_FILES_PER_PASTE', () => {
  test('is 400 naming the number, as a create past it does', async () => {
    const few = await startServer({ env: { MAX_FILES_PER_PASTE: '2' } });
    const t = await makeToken(few.dataDir, { user: 'dan' });
    const one = (name: string) => ({ name, bytes: Buffer.from(name) });
    const made = await sendFiles(few, t, { content: 'x' }, [one('a'), one('b')]);
    assert.equal(made.status, 200, made.text);
    const edit = await sendFiles(few, t, { hash: String(made.json['hash']) }, [one('c')], '/api/v1/paste_edit.php');
    assert.equal(edit.status, 400, edit.text);
    assert.match(edit.json.error ?? '', /at most 2 files/);
  });
});
