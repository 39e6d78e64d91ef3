import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { namesEtag } from '../../../src/http/conditional.ts';
import { makeToken, req, startServer, type AppServer } from '../../helpers/server.ts';

let s: AppServer;
let token: string;

before(async () => {
  s = await startServer();
  token = await makeToken(s.dataDir);
});

const create = async (body: Record<string, unknown>): Promise<string> =>
  String((await req(s, 'POST', '/api/v1/paste_create.php', { token, body })).json['hash']);

describe('ETag and If-None-Match on reads', () => {
  test('paste.php and raw.php carry the revision; naming it is 304 with no body and no view counted', async () => {
    const hash = await create({ content: 'cache me' });
    const first = await req(s, 'GET', `/api/v1/paste.php?hash=${hash}`, { token });
    const etag = String(first.headers['etag']);
    assert.match(etag, /^"[A-Za-z0-9]{10}\.[0-9a-z]+"$/);
    const raw = await req(s, 'GET', `/api/v1/raw.php?hash=${hash}`, { token });
    assert.equal(raw.headers['etag'], etag, 'one tag per revision, on both');
    for (const path of [`/api/v1/paste.php?hash=${hash}`, `/api/v1/raw.php?hash=${hash}`]) {
      for (const held of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
        const r = await req(s, 'GET', path, { token, headers: { 'if-none-match': held } });
        assert.equal(r.status, 304, `${path} ${held}`);
        assert.equal(r.text, '');
        assert.equal(r.headers['etag'], etag);
      }
      assert.equal((await req(s, 'GET', path, { token, headers: { 'if-none-match': '"stale.1"' } })).status, 200);
    }
    // Two counted reads (first, raw) and two 200s with a stale tag: the 304s counted nothing.
    const after = await req(s, 'GET', `/api/v1/paste.php?hash=${hash}`, { token });
    assert.equal((after.json['paste'] as Record<string, number>)['view_count'], 5);
  });

  test('an edit makes a new tag, even two edits in the same millisecond', async () => {
    const hash = await create({ content: 'v1' });
    const tags = new Set<string>();
    tags.add(String((await req(s, 'GET', `/api/v1/raw.php?hash=${hash}`, { token })).headers['etag']));
    await Promise.all(
      ['v2', 'v3', 'v4'].map((content) => req(s, 'POST', '/api/v1/paste_edit.php', { token, body: { hash, content } })),
    );
    tags.add(String((await req(s, 'GET', `/api/v1/raw.php?hash=${hash}`, { token })).headers['etag']));
    assert.equal(tags.size, 2);
    const edited = await req(s, 'POST', '/api/v1/paste_edit.php', { token, body: { hash, content: 'v5' } });
    const now = String((await req(s, 'GET', `/api/v1/raw.php?hash=${hash}`, { token })).headers['etag']);
    assert.equal(edited.headers['etag'], now, 'the edit answer names the new revision');
    assert.ok(!tags.has(now));
  });

  test('a one-time paste named in If-None-Match is not burned; other checks come first', async () => {
    const once = await create({ content: 'secret once', burn_after_read: 1 });
    const head = await req(s, 'HEAD', `/api/v1/paste.php?hash=${once}`, { token });
    const etag = String(head.headers['etag']);
    assert.equal(
      (await req(s, 'GET', `/api/v1/raw.php?hash=${once}`, { token, headers: { 'if-none-match': etag } })).status,
      304,
    );
    assert.equal(
      (await req(s, 'GET', `/api/v1/raw.php?hash=${once}`, { token })).text,
      'secret once',
      'still there to be read once',
    );
    assert.equal(
      (await req(s, 'GET', `/api/v1/raw.php?hash=${once}`, { token, headers: { 'if-none-match': etag } })).status,
      410,
    );
    const locked = await create({ content: 'locked', password: 'pw' });
    const other = await makeToken(s.dataDir, { user: 'carol' });
    assert.equal(
      (await req(s, 'GET', `/api/v1/raw.php?hash=${locked}`, { token: other, headers: { 'if-none-match': '*' } }))
        .status,
      401,
      'the password is asked first',
    );
    assert.equal(
      (await req(s, 'GET', '/api/v1/raw.php?hash=ZZZZZZZZZZ', { token, headers: { 'if-none-match': '*' } })).status,
      404,
    );
  });
});

describe('If-Match on edit and delete', () => {
  test('the current tag lets the write through; a stale one is 412 and nothing changes', async () => {
    const hash = await create({ content: 'base' });
    const etag = String((await req(s, 'GET', `/api/v1/raw.php?hash=${hash}`, { token })).headers['etag']);
    const ok = await req(s, 'POST', '/api/v1/paste_edit.php', {
      token,
      body: { hash, content: 'mine' },
      headers: { 'if-match': etag },
    });
    assert.equal(ok.status, 200);
    const late = await req(s, 'POST', '/api/v1/paste_edit.php', {
      token,
      body: { hash, content: 'theirs' },
      headers: { 'if-match': etag },
    });
    assert.equal(late.status, 412);
    assert.equal(late.json['code'], 'precondition_failed');
    assert.equal((await req(s, 'GET', `/api/v1/raw.php?hash=${hash}`, { token })).text, 'mine');
    assert.equal(
      (await req(s, 'POST', '/api/v1/paste_delete.php', { token, body: { hash }, headers: { 'if-match': etag } }))
        .status,
      412,
    );
    assert.equal(
      (
        await req(s, 'POST', '/api/v1/paste_delete.php', {
          token,
          body: { hash },
          headers: { 'if-match': `W/${String(ok.headers['etag'])}` },
        })
      ).status,
      412,
      'a weak tag never matches',
    );
    assert.equal(
      (
        await req(s, 'POST', '/api/v1/paste_delete.php', {
          token,
          body: { hash },
          headers: { 'if-match': String(ok.headers['etag']) },
        })
      ).status,
      200,
    );
  });
});

describe('entity tag lists', () => {
  const tag = '"abc.1"';
  const cases: [string | undefined, boolean, boolean][] = [
    [undefined, false, false],
    ['*', true, true],
    [tag, true, true],
    [`W/${tag}`, true, false],
    [` "x" ,${tag} `, true, true],
    ['"abc.2"', false, false],
    ['abc.1', false, false],
  ];
  for (const [header, weakly, strongly] of cases) {
    test(`${header ?? '(none)'}: If-None-Match ${weakly}, If-Match ${strongly}`, () => {
      assert.equal(namesEtag(header, tag, false), weakly);
      assert.equal(namesEtag(header, tag, true), strongly);
    });
  }
});
