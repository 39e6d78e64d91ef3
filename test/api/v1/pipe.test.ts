import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { prefersPlainText } from '../../../src/http/accept.ts';
import { makeToken, req, startServer, type TestServer } from '../../helpers/server.ts';

let s: TestServer;
let token: string;

before(async () => {
  s = await startServer();
  token = await makeToken(s.dataDir);
});

const LOG = 'build 1/3 ok\r\nbuild 2/3 "quoted" & <tagged>\n\tü✓ done\n';

describe('creating a paste from a pipe: a text/plain body', () => {
  test('is the content, byte for byte, and the other fields come from the query string', async () => {
    const r = await req(s, 'POST', '/api/v1/paste_create.php?title=build.log&expiry=1d&language=text&content=ignored', {
      token,
      body: LOG,
      headers: { 'content-type': 'text/plain' },
    });
    assert.equal(r.status, 200, r.text);
    const hash = String(r.json['hash']);
    const raw = await req(s, 'GET', `/api/v1/raw.php?hash=${hash}`, { token });
    assert.equal(raw.text, LOG);
    const got = await req(s, 'GET', `/api/v1/paste.php?hash=${hash}`, { token });
    const paste = got.json['paste'] as Record<string, unknown>;
    assert.equal(paste['title'], 'build.log');
    assert.equal(paste['language'], 'text');
    assert.notEqual(paste['expire_at'], null);
  });

  test('keeps a leading byte order mark, as any other bytes; a JSON body may start with one', async () => {
    const bom = Buffer.from([0xef, 0xbb, 0xbf]);
    const body = Buffer.concat([bom, Buffer.from('line1\r\nline2\n')]);
    const r = await req(s, 'POST', '/api/v1/paste_create.php', {
      token,
      body,
      headers: { 'content-type': 'text/plain; charset=utf-8' },
    });
    assert.equal(r.status, 200, r.text);
    const raw = await req(s, 'GET', `/api/v1/raw.php?hash=${String(r.json['hash'])}`, { token });
    assert.deepEqual(Buffer.from(raw.text), body);
    const json = await req(s, 'POST', '/api/v1/paste_create.php', {
      token,
      body: Buffer.concat([bom, Buffer.from('{"content":"after a BOM"}')]),
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(json.status, 200, json.text);
    assert.equal(
      (await req(s, 'GET', `/api/v1/raw.php?hash=${String(json.json['hash'])}`, { token })).text,
      'after a BOM',
    );
  });

  test('with Accept: text/plain the answer is the URL and a newline', async () => {
    const r = await req(s, 'POST', '/api/v1/paste_create.php', {
      token,
      body: 'echo hi\n',
      headers: { 'content-type': 'text/plain; charset=utf-8', accept: 'text/plain' },
    });
    assert.equal(r.status, 200);
    assert.match(String(r.headers['content-type']), /^text\/plain; charset=utf-8/);
    assert.match(r.text, /^http:\/\/localhost:\d+\/p\/[A-Za-z0-9]{10}\n$/);
    const hash = r.text.trim().split('/').pop() ?? '';
    assert.equal((await req(s, 'GET', `/api/v1/raw.php?hash=${hash}`, { token })).text, 'echo hi\n');
    // The same ask with a JSON body: the answer follows Accept, whatever the body's type.
    const j = await req(s, 'POST', '/api/v1/paste_create.php', {
      token,
      body: { content: 'x' },
      headers: { accept: 'text/plain' },
    });
    assert.match(j.text, /^http:\/\/\S+\/p\/[A-Za-z0-9]{10}\n$/);
  });

  test('another charset is 415, edit and delete take no text body, and an empty one is 400', async () => {
    const latin = await req(s, 'POST', '/api/v1/paste_create.php', {
      token,
      body: 'x',
      headers: { 'content-type': 'text/plain; charset=iso-8859-1' },
    });
    assert.equal(latin.status, 415);
    assert.match(String(latin.json.error), /text\/plain \(UTF-8\)/);
    for (const path of ['/api/v1/paste_edit.php?hash=AAAAAAAAAA', '/api/v1/paste_delete.php?hash=AAAAAAAAAA']) {
      const r = await req(s, 'POST', path, { token, body: 'x', headers: { 'content-type': 'text/plain' } });
      assert.equal(r.status, 415, path);
      assert.doesNotMatch(String(r.json.error), /text\/plain/);
    }
    const empty = await req(s, 'POST', '/api/v1/paste_create.php', {
      token,
      body: '',
      headers: { 'content-type': 'text/plain' },
    });
    assert.equal(empty.status, 400);
    assert.match(String(empty.json.error), /content must not be empty/);
    const notUtf8 = await req(s, 'POST', '/api/v1/paste_create.php', {
      token,
      body: Buffer.from([0xff, 0xfe]),
      headers: { 'content-type': 'text/plain' },
    });
    assert.equal(notUtf8.status, 400);
  });

  test('needs its token in the header or query string (a text body has no token field)', async () => {
    const none = await req(s, 'POST', '/api/v1/paste_create.php', {
      body: `token=${token}`,
      headers: { 'content-type': 'text/plain' },
    });
    assert.equal(none.status, 401);
    const query = await req(s, 'POST', `/api/v1/paste_create.php?token=${token}`, {
      body: 'via query',
      headers: { 'content-type': 'text/plain' },
    });
    assert.equal(query.status, 200);
  });
});

describe('Accept: does the client prefer plain text?', () => {
  const cases: [string | undefined, boolean][] = [
    [undefined, false],
    ['*/*', false],
    ['text/plain', true],
    ['text/*', true],
    ['text/plain, application/json', false],
    ['application/json;q=0.5, text/plain', true],
    ['text/plain;q=0.5, application/json', false],
    ['text/plain;q=0, */*', false],
    ['text/plain, */*;q=0.8', true],
    ['text/html', false],
    ['TEXT/PLAIN', true],
    ['text/plain;q=abc', false],
  ];
  for (const [accept, text] of cases) {
    test(`${accept ?? '(none)'} → ${text ? 'text' : 'JSON'}`, () => assert.equal(prefersPlainText(accept), text));
  }
});
