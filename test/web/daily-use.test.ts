import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { cleanup, makeToken, req, spawnServer, startServer } from '../helpers/server.ts';
import { apiLogLines } from '../helpers/stored.ts';
import { until } from '../helpers/until.ts';
import { createViaForm, registerAll } from '../helpers/web-client.ts';

describe('the web side, for daily use', () => {
  test('a paste typed into the web form keeps LF line endings (a browser sends CRLF); the API stays byte for byte', async () => {
    const server = await startServer({ env: { OPEN_REGISTRATION: '1' } });
    const [alice] = await registerAll(server, 'alice');
    const token = await makeToken(server.dataDir, { user: 'alice' });
    const hash = await createViaForm(alice, { content: '#!/bin/sh\r\necho hi\r\n' });
    assert.equal((await req(server, 'GET', `/api/v1/raw.php?hash=${hash}`, { token })).text, '#!/bin/sh\necho hi\n');
    const form = await alice.get(`/p/${hash}/edit`);
    const edited = await alice.post(`/p/${hash}/edit`, {
      _csrf: form.csrf ?? '',
      title: '',
      content: 'one\r\ntwo\r\n',
      language: 'text',
      privacy: 'public',
      expiry: 'keep',
    });
    assert.ok(edited.status === 303 || edited.status === 200, String(edited.status));
    assert.equal((await req(server, 'GET', `/api/v1/raw.php?hash=${hash}`, { token })).text, 'one\ntwo\n');
    const viaApi = String(
      (await req(server, 'POST', '/api/v1/paste_create.php', { token, body: { content: 'a\r\nb' } })).json['hash'],
    );
    assert.equal((await req(server, 'GET', `/api/v1/raw.php?hash=${viaApi}`, { token })).text, 'a\r\nb');
  });

  test('/favicon.ico, which browsers ask for on the raw text page, is the icon', async () => {
    const server = await startServer();
    const r = await req(server, 'GET', '/favicon.ico');
    assert.equal(r.status, 200);
    assert.equal(r.headers['content-type'], 'image/svg+xml');
    assert.match(r.text, /^<svg /);
  });
});

describe('My pastes: search and filters', () => {
  test('finds pastes by a word of the title or the text, by language and by visibility; only your own', async () => {
    const server = await startServer({ env: { OPEN_REGISTRATION: '1' } });
    const [alice, bob] = await registerAll(server, 'alice', 'bob');
    await createViaForm(alice, { title: 'Deploy notes', content: 'kubectl apply -f app.yaml', language: 'bash' });
    await createViaForm(alice, {
      title: 'Groceries',
      content: 'milk, eggs, NEEDLE',
      language: 'text',
      privacy: 'unlisted',
    });
    await createViaForm(alice, { title: 'Script', content: 'print("hi")', language: 'python', privacy: 'private' });
    await createViaForm(bob, { title: 'needle of bob', content: 'x' });
    const titles = async (query: string): Promise<string[]> =>
      [
        ...(await alice.get(`/my?${query}`)).text.matchAll(
          /class="title-cell" href="\/p\/[A-Za-z0-9]{10}"><bdi>([^<]*)<\/bdi>/g,
        ),
      ].map((m) => m[1] ?? '');
    assert.deepEqual(await titles('q=needle'), ['Groceries'], 'the text, case-insensitively, and only her own');
    assert.deepEqual(await titles('q=deploy'), ['Deploy notes']);
    assert.deepEqual(await titles('language=python'), ['Script']);
    assert.deepEqual(await titles('privacy=unlisted'), ['Groceries']);
    assert.deepEqual(await titles('q=nothing-like-it'), []);
    assert.match((await alice.get('/my?q=nothing-like-it')).text, /No paste of yours matches/);
    assert.equal((await titles('')).length, 3);
  });
});

describe('recent pastes', () => {
  test('are paged, twenty a page, each with its language and author', async () => {
    const server = await startServer({ env: { OPEN_REGISTRATION: '1' } });
    await registerAll(server, 'alice');
    const token = await makeToken(server.dataDir, { user: 'alice' });
    for (let i = 1; i <= 25; i++) {
      await req(server, 'POST', '/api/v1/paste_create.php', {
        token,
        body: { title: `recent ${i}`, content: `x = ${i}`, language: 'python' },
      });
    }
    const first = await req(server, 'GET', '/');
    const titles = (text: string): string[] =>
      [...text.matchAll(/<span class="item-title"><bdi>(recent \d+)<\/bdi>/g)].map((m) => m[1] ?? '');
    assert.equal(titles(first.text).length, 20);
    assert.equal(titles(first.text)[0], 'recent 25');
    assert.match(
      first.text,
      /<span class="badge badge-accent">Python<\/span><span class="muted small">by <bdi>alice<\/bdi><\/span>/,
    );
    assert.match(first.text, /href="\/\?page=2" rel="next">Older →<\/a>/);
    const second = await req(server, 'GET', '/?page=2');
    assert.deepEqual(titles(second.text), ['recent 5', 'recent 4', 'recent 3', 'recent 2', 'recent 1']);
    assert.doesNotMatch(second.text, /rel="next"/);
    assert.match(second.text, /href="\/\?page=1" rel="prev">/);
  });
});

describe('the API Logs filters', () => {
  test('read From and To as UTC, whatever the zone the server (or the browser) is in', async () => {
    const server = await spawnServer({ env: { OPEN_REGISTRATION: '1', TZ: 'Pacific/Kiritimati' } });
    try {
      const [admin] = await registerAll(server, 'root');
      const token = await makeToken(server.dataDir, { user: 'root' });
      assert.equal((await req(server, 'GET', '/api/v1/paste.php?hash=AAAAAAAAAA', { token })).status, 404);
      await until(async () => (await apiLogLines(server.dataDir)).length > 0, { what: 'the line in the API log' });
      const line = (await apiLogLines(server.dataDir))[0] as { time: string };
      const minute = line.time.slice(0, 16);
      const next = new Date(Date.parse(`${minute}Z`) + 60_000).toISOString().slice(0, 16);
      const rows = async (query: string): Promise<number> =>
        ((await admin.get(`/admin/logs?${query}`)).text.match(/<td data-label="Time \(UTC\)"/g) ?? []).length;
      assert.equal(await rows(`from=${minute}`), 1);
      assert.equal(await rows(`from=${next}`), 0);
      assert.equal(await rows(`to=${next}`), 1);
      assert.equal(await rows(`to=${minute}`), 0);
    } finally {
      await server.stop();
      await cleanup(server.dataDir);
    }
  });
});
