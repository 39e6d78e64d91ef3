import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { makeToken, req, startServer } from '../helpers/server.ts';
import { createViaForm, registerAll } from '../helpers/web-client.ts';

describe('the web side, for daily use', () => {
  test('a paste typed into the web form keeps LF line endings (a browser sends CRLF); the API stays byte for byte', async () => {
    const server = await startServer({ env: { OPEN_REGISTRATION: '1' } });
    const [alice] = await registerAll(server, 'alice');
    const token = await makeToken(server.dataDir, { user: 'alice' });
    const hash = await createViaForm(alice, { content: '#!/bin/sh\r\necho hi\r\n' });
    assert.equal((await req(server, 'GET', `/api/v1/raw.php?hash=${hash}`, { token })).text, '#!/bin/sh\necho hi\n');
    const form = await alice.get(`/p/${hash}/edit`);
    const edited = await alice.post(`/p/${hash}/edit`, { _csrf: form.csrf ?? '', title: '', content: 'one\r\ntwo\r\n', language: 'text', privacy: 'public', expiry: 'keep' });
    assert.ok(edited.status === 303 || edited.status === 200, String(edited.status));
    assert.equal((await req(server, 'GET', `/api/v1/raw.php?hash=${hash}`, { token })).text, 'one\ntwo\n');
    const viaApi = String((await req(server, 'POST', '/api/v1/paste_create.php', { token, body: { content: 'a\r\nb' } })).json['hash']);
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
