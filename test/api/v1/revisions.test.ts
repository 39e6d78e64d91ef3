import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { lineDiff } from '../../../src/web/line-diff.ts';
import { makeToken, req, startServer } from '../../helpers/server.ts';
import { plantRevision, storedRevisions } from '../../helpers/stored.ts';
import { WebClient } from '../../helpers/web-client.ts';

describe('revisions', () => {
  test('three edits make four revisions, each readable through the API without a view counted', async () => {
    const server = await startServer();
    const token = await makeToken(server.dataDir);
    const hash = String(
      (await req(server, 'POST', '/api/v1/paste_create.php', { token, body: { content: 'v1\n' } })).json['hash'],
    );
    for (const content of ['v2\n', 'v3\n', 'v4 <b>&</b>\n']) {
      assert.equal(
        (await req(server, 'POST', '/api/v1/paste_edit.php', { token, body: { hash, content } })).status,
        200,
      );
    }
    const current = await req(server, 'GET', `/api/v1/paste.php?hash=${hash}`, { token });
    assert.equal((current.json['paste'] as Record<string, unknown>)['revision'], 4);
    const texts = [];
    for (let n = 1; n <= 4; n++) {
      const r = await req(server, 'GET', `/api/v1/raw.php?hash=${hash}&revision=${n}`, { token });
      assert.equal(r.status, 200);
      texts.push(r.text);
      const j = await req(server, 'GET', `/api/v1/paste.php?hash=${hash}&revision=${n}`, { token });
      assert.equal((j.json['paste'] as Record<string, unknown>)['revision'], n);
    }
    assert.deepEqual(texts, ['v1\n', 'v2\n', 'v3\n', 'v4 <b>&</b>\n']);
    assert.equal((await req(server, 'GET', `/api/v1/paste.php?hash=${hash}&revision=5`, { token })).status, 404);
    assert.equal((await req(server, 'GET', `/api/v1/paste.php?hash=${hash}&revision=0`, { token })).status, 400);
    const after = await req(server, 'GET', `/api/v1/paste.php?hash=${hash}`, { token });
    assert.equal((after.json['paste'] as Record<string, number>)['view_count'], 2, 'revision reads counted nothing');
    assert.deepEqual(await storedRevisions(server.dataDir, hash), [1, 2, 3]);

    // Others who may not read the paste may not read its revisions either.
    const privateHash = String(
      (
        await req(server, 'POST', '/api/v1/paste_create.php', {
          token,
          body: { content: 'secret v1', privacy: 'private' },
        })
      ).json['hash'],
    );
    await req(server, 'POST', '/api/v1/paste_edit.php', { token, body: { hash: privateHash, content: 'secret v2' } });
    const bob = await makeToken(server.dataDir, { user: 'bob' });
    assert.equal(
      (await req(server, 'GET', `/api/v1/raw.php?hash=${privateHash}&revision=1`, { token: bob })).status,
      404,
    );

    // A deleted paste takes its revisions with it.
    assert.equal((await req(server, 'POST', '/api/v1/paste_delete.php', { token, body: { hash } })).status, 200);
    assert.deepEqual(await storedRevisions(server.dataDir, hash), []);
  });

  test('a one-time paste keeps no revisions, and neither the API nor the History page reads it without burning it', async () => {
    const server = await startServer();
    const token = await makeToken(server.dataDir);
    const hash = String(
      (await req(server, 'POST', '/api/v1/paste_create.php', { token, body: { content: 'first', burn_after_read: 1 } }))
        .json['hash'],
    );
    // A revision an earlier version of the server kept for it goes at the next edit.
    await plantRevision(server.dataDir, hash, 1);
    assert.deepEqual(await storedRevisions(server.dataDir, hash), [1]);
    assert.equal(
      (await req(server, 'POST', '/api/v1/paste_edit.php', { token, body: { hash, content: 'second' } })).status,
      200,
    );
    assert.deepEqual(
      await storedRevisions(server.dataDir, hash),
      [],
      'the replaced text of a one-time paste is not kept',
    );

    const bob = await makeToken(server.dataDir, { user: 'bob' });
    for (const [path, who] of [
      [`/api/v1/raw.php?hash=${hash}&revision=1`, bob],
      [`/api/v1/paste.php?hash=${hash}&revision=2`, bob],
      [`/api/v1/raw.php?hash=${hash}&revision=2`, token],
    ] as const) {
      const r = await req(server, 'GET', path, { token: who });
      assert.equal(r.status, 403, path);
      assert.equal(r.json['ok'], false);
      assert.match(String(r.json['error']), /one-time paste/);
      assert.doesNotMatch(r.text, /first|second/);
    }
    const visitor = new WebClient(server);
    const history = await visitor.get(`/p/${hash}/history`);
    assert.equal(history.status, 403);
    assert.match(history.text, /one-time paste keeps no revisions/);
    assert.doesNotMatch(history.text, /first|second/);

    // None of that burned it: the one read that does shows the current text, once.
    const read = await req(server, 'GET', `/api/v1/raw.php?hash=${hash}`, { token: bob });
    assert.equal(read.status, 200);
    assert.equal(read.text, 'second');
    assert.equal((await req(server, 'GET', `/api/v1/raw.php?hash=${hash}&revision=1`, { token })).status, 410);
    assert.equal((await visitor.get(`/p/${hash}/history`)).status, 410);
  });

  test('MAX_REVISIONS earlier versions are kept, the oldest dropped from storage and the API, also when it is lowered', async () => {
    const server = await startServer({ env: { MAX_REVISIONS: '3' } });
    const token = await makeToken(server.dataDir);
    const hash = String(
      (await req(server, 'POST', '/api/v1/paste_create.php', { token, body: { content: 'v1' } })).json['hash'],
    );
    for (let n = 2; n <= 9; n++)
      assert.equal(
        (await req(server, 'POST', '/api/v1/paste_edit.php', { token, body: { hash, content: `v${n}` } })).status,
        200,
      );
    assert.deepEqual(await storedRevisions(server.dataDir, hash), [6, 7, 8]);
    for (let n = 1; n <= 9; n++) {
      const r = await req(server, 'GET', `/api/v1/raw.php?hash=${hash}&revision=${n}`, { token });
      assert.equal(r.status, n >= 6 ? 200 : 404, `revision ${n}`);
      if (n >= 6) assert.equal(r.text, `v${n}`);
    }
    const history = await new WebClient(server).get(`/p/${hash}/history`);
    assert.deepEqual(
      [...history.text.matchAll(/<td data-label="Revision">(\d+)/g)].map((m) => m[1]),
      ['9', '8', '7', '6'],
    );

    // A lower limit after a restart drops the surplus at the next edit.
    await server.stop();
    const again = await startServer({ dataDir: server.dataDir, env: { MAX_REVISIONS: '1' } });
    await req(again, 'POST', '/api/v1/paste_edit.php', { token, body: { hash, content: 'v10' } });
    assert.deepEqual(await storedRevisions(again.dataDir, hash), [9]);
  });

  test('the History page lists 50 versions a page, newest first, with links to the newer and older pages', async () => {
    const server = await startServer();
    const token = await makeToken(server.dataDir);
    const hash = String(
      (await req(server, 'POST', '/api/v1/paste_create.php', { token, body: { content: 'v1' } })).json['hash'],
    );
    for (let n = 2; n <= 55; n++)
      await req(server, 'POST', '/api/v1/paste_edit.php', { token, body: { hash, content: `v${n}\n`.repeat(n) } });
    const visitor = new WebClient(server);
    const rows = (text: string): number[] =>
      [...text.matchAll(/<td data-label="Revision">(\d+)/g)].map((m) => Number(m[1]));
    const first = await visitor.get(`/p/${hash}/history`);
    assert.equal(first.status, 200);
    assert.deepEqual(
      rows(first.text),
      Array.from({ length: 50 }, (_, i) => 55 - i),
    );
    assert.match(first.text, /Page 1 of 2/);
    assert.match(first.text, new RegExp(`href="/p/${hash}/history\\?page=2" rel="next">Older`));
    assert.doesNotMatch(first.text, /rel="prev"/);
    // Revision 54 is 54 lines of 4 bytes, its size read from the start of its kept file.
    assert.match(first.text, /<td data-label="Revision">54<\/td>.*?<td data-label="Size">216 bytes<\/td>/);
    const second = await visitor.get(`/p/${hash}/history?page=2&from=1&to=2`);
    assert.deepEqual(rows(second.text), [5, 4, 3, 2, 1]);
    assert.match(second.text, new RegExp(`href="/p/${hash}/history\\?from=1&amp;to=2&amp;page=1" rel="prev">← Newer`));
    assert.doesNotMatch(second.text, /rel="next"/);
    assert.match(second.text, /<span class="tk-add">\+ v2<\/span>/, 'the comparison asked for');
    // Every version can still be compared from any page.
    assert.equal((second.text.match(/<option value="\d+"/g) ?? []).length, 110);
    assert.deepEqual(rows((await visitor.get(`/p/${hash}/history?page=9`)).text), [5, 4, 3, 2, 1]);
    assert.equal(rows((await visitor.get(`/p/${hash}/history?page=x`)).text).length, 50);
  });

  test('the History page lists them and shows an escaped line diff', async () => {
    const server = await startServer();
    const token = await makeToken(server.dataDir);
    const hash = String(
      (
        await req(server, 'POST', '/api/v1/paste_create.php', {
          token,
          body: { content: 'keep\n<script>old()</script>\n' },
        })
      ).json['hash'],
    );
    await req(server, 'POST', '/api/v1/paste_edit.php', {
      token,
      body: { hash, content: 'keep\n<script>new()</script>\n' },
    });
    const visitor = new WebClient(server);
    const pageView = await visitor.get(`/p/${hash}`);
    assert.match(pageView.text, new RegExp(`<a href="/p/${hash}/history">2, see the history</a>`));
    const history = await visitor.get(`/p/${hash}/history`);
    assert.equal(history.status, 200);
    assert.match(history.text, /<span class="tk-del">- &lt;script&gt;old\(\)&lt;\/script&gt;<\/span>/);
    assert.match(history.text, /<span class="tk-add">\+ &lt;script&gt;new\(\)&lt;\/script&gt;<\/span>/);
    assert.match(history.text, /<span class="l"> {2}keep<\/span>/);
    assert.doesNotMatch(history.text, /<script>old/);
    const same = await visitor.get(`/p/${hash}/history?from=2&to=2`);
    assert.match(same.text, /The text of these two revisions is the same/);
    assert.equal((await visitor.get('/p/ZZZZZZZZZZ/history')).status, 404);
  });
});

describe('the line diff', () => {
  test('is a shortest edit script that rebuilds both texts', () => {
    assert.deepEqual(lineDiff('a\nb\nc\n', 'a\nx\nc\n'), [
      { op: ' ', text: 'a' },
      { op: '-', text: 'b' },
      { op: '+', text: 'x' },
      { op: ' ', text: 'c' },
    ]);
    assert.deepEqual(lineDiff('', 'x'), [{ op: '+', text: 'x' }]);
    assert.deepEqual(lineDiff('x\n', ''), [{ op: '-', text: 'x' }]);
    for (let t = 0; t < 300; t++) {
      const gen = (): string[] =>
        Array.from({ length: (t * 7 + 3) % 9 }, (_, i) => 'abc'[(t * 13 + i * 5 + ((i * i) % 7)) % 3] as string);
      const a = gen();
      const b = gen().reverse();
      const d = lineDiff(a.join('\n'), b.join('\n')) ?? [];
      assert.deepEqual(
        d.filter((l) => l.op !== '+').map((l) => l.text),
        a,
      );
      assert.deepEqual(
        d.filter((l) => l.op !== '-').map((l) => l.text),
        b,
      );
    }
  });

  test('is as short as an LCS says, with the common start and end set aside', () => {
    // Edits of a shortest script = n + m - 2·LCS, against a plain dynamic programme.
    const lcs = (a: string[], b: string[]): number => {
      const row = new Array<number>(b.length + 1).fill(0);
      for (const x of a) {
        let diag = 0;
        for (let j = 1; j <= b.length; j++) {
          const up = row[j] as number;
          row[j] = x === b[j - 1] ? diag + 1 : Math.max(up, row[j - 1] as number);
          diag = up;
        }
      }
      return row[b.length] as number;
    };
    let seed = 7;
    const rnd = (n: number): number => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
    for (let t = 0; t < 400; t++) {
      const gen = (): string[] => Array.from({ length: rnd(14) }, () => 'abcd'[rnd(4)] as string);
      const a = ['p', 'q', ...gen(), 'z'];
      const b = t % 3 === 0 ? gen() : ['p', 'q', ...gen(), 'z'];
      const d = lineDiff(a.join('\n'), b.join('\n')) ?? [];
      assert.deepEqual(
        d.filter((l) => l.op !== '+').map((l) => l.text),
        a,
      );
      assert.deepEqual(
        d.filter((l) => l.op !== '-').map((l) => l.text),
        b,
      );
      assert.equal(d.filter((l) => l.op !== ' ').length, a.length + b.length - 2 * lcs(a, b), `${a} → ${b}`);
    }
  });

  test('finds a small change in long texts of long, alike lines, within the bounds', () => {
    const line = (i: number): string => `${'x'.repeat(95)}${String(i).padStart(5, '0')}`;
    const a = Array.from({ length: 10_000 }, (_, i) => line(i));
    const b = [...a.slice(0, 5000), 'new', ...a.slice(5001)];
    const d = lineDiff(a.join('\n'), b.join('\n')) ?? [];
    assert.deepEqual(
      d.filter((l) => l.op !== ' '),
      [
        { op: '-', text: line(5000) },
        { op: '+', text: 'new' },
      ],
    );
    assert.equal(d.length, 10_001);
  });

  test('gives up on texts that differ too much rather than hold the event loop', () => {
    // 10,000 lines against 10,000 others: refused before any search (and its memory).
    const many = (p: string): string => Array.from({ length: 10_000 }, (_, i) => `${p}${i}`).join('\n');
    assert.equal(lineDiff(many('a'), many('b')), null);
    // Lengths alike, yet every other line changed: the search stops at its bound of edits.
    const every = (p: string): string =>
      Array.from({ length: 10_000 }, (_, i) => (i % 2 === 0 ? `${p}${i}` : `same${i}`)).join('\n');
    assert.equal(lineDiff(every('a'), every('b')), null);
    assert.equal(lineDiff(many('a'), ''), null);
    const a = Array.from({ length: 3000 }, (_, i) => `a${i}`).join('\n');
    const b = Array.from({ length: 3000 }, (_, i) => `b${i}`).join('\n');
    assert.equal(lineDiff(a, b), null);
    assert.equal(lineDiff('x\n'.repeat(10_001), ''), null);
  });
});
