import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { crc32 } from 'node:zlib';
import { multipart } from '../helpers/multipart-body.ts';
import { req, type Res, startServer, type AppServer } from '../helpers/server.ts';
import { spooledUploads } from '../helpers/stored.ts';
import { skipWithout } from '../helpers/tools.ts';
import { until } from '../helpers/until.ts';
import { registerAll, WebClient } from '../helpers/web-client.ts';
import { readZip, unzipTest } from '../helpers/zip-reader.ts';

const MAX_FILE_BYTES = 20_000;
const QUOTA = 100_000;
/** The smallest PNG: a 1×1 transparent pixel. */
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
);
const LOG = Buffer.from('line one\nline two\n'.repeat(200));

let s: AppServer;
let alice: WebClient;
let bob: WebClient;

before(async () => {
  s = await startServer({
    env: { OPEN_REGISTRATION: '1', MAX_FILE_BYTES: String(MAX_FILE_BYTES), USER_QUOTA_BYTES: String(QUOTA) },
  });
  [alice, bob] = await registerAll(s, 'alice', 'bob');
});

type FilePart = { name: string; bytes: Buffer; type?: string };

/** POSTs a multipart form as the browser sends it: the client's cookies, its CSRF token as a text part first. */
async function postForm(
  c: WebClient,
  path: string,
  fields: Record<string, string | string[]>,
  files: FilePart[],
  csrf = true,
): Promise<Res> {
  const { body, type } = multipart(csrf ? { _csrf: c.csrf, ...fields } : fields, files);
  return req(s, 'POST', path, { headers: { cookie: c.cookieHeader(), 'content-type': type }, body });
}

const FORM = { title: 'Shot and log', language: 'auto', privacy: 'public', expiry: 'never', highlight: '1' };

/** Creates a paste through the home page's multipart form; answers its hash. */
async function createWithFiles(c: WebClient, fields: Record<string, string>, files: FilePart[]): Promise<string> {
  await c.get('/');
  const r = await postForm(c, '/', { ...FORM, ...fields }, files);
  assert.equal(r.status, 303, r.text);
  const hash = /^\/p\/([A-Za-z0-9]{10})$/.exec(String(r.headers['location']))?.[1];
  assert.ok(hash !== undefined, String(r.headers['location']));
  return hash;
}

const fileNames = async (c: WebClient, hash: string): Promise<string[]> =>
  [...(await c.get(`/p/${hash}`)).text.matchAll(/<a class="file-name" href="[^"]*"><bdi>([^<]*)<\/bdi><\/a>/g)].map(
    (m) => m[1] as string,
  );

describe('the paste forms take files', () => {
  test('the new-paste form is multipart, with a file input, and its text is not required', async () => {
    const home = await alice.get('/');
    assert.match(home.text, /<form method="post" action="\/" enctype="multipart\/form-data">/);
    assert.match(home.text, /<input type="file" id="file" name="file" multiple>/);
    assert.doesNotMatch(home.text, /<textarea[^>]* required/);
  });

  test('a multipart form with its CSRF token creates a paste with its files, served back byte for byte', async () => {
    const hash = await createWithFiles(alice, { content: 'echo hi\r\n' }, [
      { name: 'shot.png', bytes: PNG, type: 'image/png' },
      { name: 'build.log', bytes: LOG, type: 'text/plain' },
    ]);
    const page = await alice.get(`/p/${hash}`);
    assert.deepEqual(await fileNames(alice, hash), ['shot.png', 'build.log']);
    assert.match(page.text, /<img class="file-image" src="\/p\/[A-Za-z0-9]{10}\/files\/shot\.png"/);
    assert.match(page.text, new RegExp(`href="/p/${hash}/files.zip"`));
    assert.ok((await alice.get(`/p/${hash}/files/shot.png`)).body.equals(PNG));
    assert.ok((await alice.get(`/p/${hash}/files/build.log`)).body.equals(LOG));
    assert.equal((await alice.get(`/p/${hash}/raw`)).text, 'echo hi\n', 'the text as typed, LF');
    await until(async () => (await spooledUploads(s.dataDir)).length === 0, { what: 'no spooled upload is left' });
  });

  test('files without text make a paste; an empty file input (no name, no bytes) is no file', async () => {
    const only = await createWithFiles(alice, { content: '' }, [{ name: 'only.log', bytes: LOG }]);
    assert.deepEqual(await fileNames(alice, only), ['only.log']);
    const none = await createWithFiles(alice, { content: 'text only' }, [{ name: '', bytes: Buffer.alloc(0) }]);
    assert.deepEqual(await fileNames(alice, none), []);
    assert.doesNotMatch((await alice.get(`/p/${none}`)).text, /files\.zip/, 'no zip link without files');
  });

  test('neither text nor files: the form again, with why', async () => {
    await alice.get('/');
    const r = await postForm(alice, '/', { ...FORM, content: '' }, [{ name: '', bytes: Buffer.alloc(0) }]);
    assert.equal(r.status, 400);
    assert.match(r.text, /role="alert">Content must not be empty\.</);
  });

  test('a form without its CSRF token is refused and keeps nothing', async () => {
    await alice.get('/');
    const r = await postForm(alice, '/', { ...FORM, content: 'x' }, [{ name: 'a.log', bytes: LOG }], false);
    assert.equal(r.status, 403);
    await until(async () => (await spooledUploads(s.dataDir)).length === 0, { what: 'the refused upload is removed' });
  });

  test('a file past MAX_FILE_BYTES: the form is shown again with the limit, and nothing is made', async () => {
    await alice.get('/');
    const big = Buffer.alloc(MAX_FILE_BYTES + 1, 0x61);
    const r = await postForm(alice, '/', { ...FORM, content: 'x' }, [{ name: 'big.bin', bytes: big }]);
    assert.equal(r.status, 413);
    assert.match(r.text, /role="alert">A file may hold at most 20000 bytes \(MAX_FILE_BYTES\)\.</);
    assert.match(r.text, /<input type="file" id="file" name="file" multiple>/, 'the form, to try again');
    await until(async () => (await spooledUploads(s.dataDir)).length === 0, { what: 'the cut upload is removed' });
  });

  test('a file name that is a path is refused on the form', async () => {
    await alice.get('/');
    const r = await postForm(alice, '/', { ...FORM, content: 'x' }, [{ name: 'a/b.txt', bytes: LOG }]);
    assert.equal(r.status, 400);
    assert.match(r.text, /role="alert">A file name may not contain &quot;\/&quot;/);
  });

  test("past the user's quota: the form again, with why (413), and nothing made", async () => {
    const part = (i: number): FilePart => ({ name: `part${i}.bin`, bytes: Buffer.alloc(19_000, i) });
    await createWithFiles(bob, { content: 'x' }, [0, 1, 2, 3, 4].map(part));
    await bob.get('/');
    const r = await postForm(bob, '/', { ...FORM, content: 'one more' }, [part(5)]);
    assert.equal(r.status, 413);
    assert.match(r.text, /role="alert">The owner&#39;s files would pass their quota \(USER_QUOTA_BYTES\)\.</);
    assert.match(r.text, />\none more<\/textarea>/, 'the text typed is kept');
  });

  test('the edit form lists the files with a box to remove each; an edit adds and removes', async () => {
    const hash = await createWithFiles(alice, { content: 'notes' }, [
      { name: 'shot.png', bytes: PNG },
      { name: 'old <b>.log', bytes: LOG },
    ]);
    const form = await alice.get(`/p/${hash}/edit`);
    assert.match(form.text, new RegExp(`<form method="post" action="/p/${hash}/edit" enctype="multipart/form-data">`));
    assert.match(form.text, /<input type="checkbox" name="remove_file" value="old &lt;b&gt;\.log">/);
    const r = await postForm(
      alice,
      `/p/${hash}/edit`,
      { title: 'T', content: 'notes', language: 'text', privacy: 'public', expiry: 'keep', remove_file: 'old <b>.log' },
      [{ name: 'new.log', bytes: Buffer.from('new') }],
    );
    assert.equal(r.status, 303, r.text);
    assert.deepEqual(await fileNames(alice, hash), ['shot.png', 'new.log']);
    assert.equal((await alice.get(`/p/${hash}/files/old%20%3Cb%3E.log`)).status, 404);
  });

  test('removing a file the paste does not hold: the edit form again, with why', async () => {
    const hash = await createWithFiles(alice, { content: 'notes' }, [{ name: 'a.log', bytes: LOG }]);
    await alice.get(`/p/${hash}/edit`);
    const r = await postForm(
      alice,
      `/p/${hash}/edit`,
      { title: 'T', content: 'notes', language: 'text', privacy: 'public', expiry: 'keep', remove_file: 'b.log' },
      [],
    );
    assert.equal(r.status, 400);
    assert.match(r.text, /role="alert">remove_file names no file of this paste\.</);
    assert.deepEqual(await fileNames(alice, hash), ['a.log']);
  });
});

describe('the whole paste as one zip', () => {
  test('/p/{hash}/files.zip holds the text and every file under its name, sound by its CRCs and by unzip -t', async (t) => {
    const hash = await createWithFiles(alice, { title: 'My notes', language: 'python', content: 'print(1)\n' }, [
      { name: 'shot.png', bytes: PNG },
      { name: 'Ünïcødé 名前.log', bytes: LOG },
    ]);
    const r = await alice.get(`/p/${hash}/files.zip`);
    assert.equal(r.status, 200);
    assert.equal(r.headers['content-type'], 'application/zip');
    assert.equal(Number(r.headers['content-length']), r.body.length);
    assert.match(String(r.headers['content-disposition']), new RegExp(`^attachment; filename="paste-${hash}\\.zip"`));
    const entries = readZip(r.body);
    assert.deepEqual(
      entries.map((e) => e.name),
      ['My-notes.py', 'shot.png', 'Ünïcødé 名前.log'],
    );
    assert.equal(entries[0]?.bytes.toString(), 'print(1)\n');
    assert.ok(entries[1]?.bytes.equals(PNG));
    assert.equal(entries[2]?.crc, crc32(LOG));
    if (skipWithout(t, 'unzip')) return;
    assert.match(await unzipTest(r.body), /No errors detected/);
  });

  test("an untitled paste's text is paste.txt; a paste without text has only its files", async () => {
    const titled = await createWithFiles(alice, { title: '', language: 'text', content: 'hi' }, [
      { name: 'a', bytes: LOG },
    ]);
    assert.deepEqual(
      readZip((await alice.get(`/p/${titled}/files.zip`)).body).map((e) => e.name),
      ['paste.txt', 'a'],
    );
    const bare = await createWithFiles(alice, { content: '' }, [{ name: 'a', bytes: LOG }]);
    assert.deepEqual(
      readZip((await alice.get(`/p/${bare}/files.zip`)).body).map((e) => e.name),
      ['a'],
    );
  });

  test("the zip follows the page's read rules: a private paste's is nobody else's", async () => {
    const hash = await createWithFiles(alice, { privacy: 'private', content: 'secret' }, [{ name: 'a', bytes: LOG }]);
    assert.equal((await alice.get(`/p/${hash}/files.zip`)).status, 200);
    assert.equal((await bob.get(`/p/${hash}/files.zip`)).status, 404);
    assert.equal((await new WebClient(s).get(`/p/${hash}/files.zip`)).status, 404);
  });
});

describe("a visitor's form (ANONYMOUS_PASTES)", () => {
  test('without ANONYMOUS_FILES: no file input, and a multipart form is refused', async () => {
    const open = await startServer({ env: { ANONYMOUS_PASTES: '1' } });
    const v = new WebClient(open);
    const home = await v.get('/');
    assert.match(home.text, /<form method="post" action="\/">/);
    assert.doesNotMatch(home.text, /type="file"/);
    const { body, type } = multipart({ _csrf: v.csrf, content: 'x' }, [{ name: 'a.log', bytes: LOG }]);
    const r = await req(open, 'POST', '/', { headers: { cookie: v.cookieHeader(), 'content-type': type }, body });
    assert.equal(r.status, 415);
  });

  test('with ANONYMOUS_FILES: a visitor attaches files, and gets the paste and its delete link', async () => {
    const open = await startServer({ env: { ANONYMOUS_PASTES: '1', ANONYMOUS_FILES: '1' } });
    const v = new WebClient(open);
    assert.match((await v.get('/')).text, /<input type="file" id="file" name="file" multiple>/);
    const { body, type } = multipart({ _csrf: v.csrf, ...FORM, expiry: '1d', content: '' }, [
      { name: 'shot.png', bytes: PNG },
    ]);
    const r = await req(open, 'POST', '/', { headers: { cookie: v.cookieHeader(), 'content-type': type }, body });
    assert.equal(r.status, 200, r.text);
    const hash = /<a href="\/p\/([A-Za-z0-9]{10})">/.exec(r.text)?.[1];
    assert.ok(hash !== undefined);
    assert.match(r.text, /\/delete\/[A-Za-z0-9_-]+/);
    assert.ok((await v.get(`/p/${hash}/files/shot.png`)).body.equals(PNG));
  });
});
