import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { makeToken, req, startServer } from '../../helpers/server.ts';
import { WebClient } from '../../helpers/web-client.ts';

/**
 * Revisions as the data folder keeps them, one file each: a damaged one (revisions.test.ts
 * holds what every backend does).
 */

describe('a damaged revision file', () => {
  test('is paste_damaged to those who may read the paste, and the History page lists it and compares the others', async () => {
    const server = await startServer();
    const token = await makeToken(server.dataDir);
    const hash = String(
      (await req(server, 'POST', '/api/v1/paste_create.php', { token, body: { content: 'v1\n' } })).json['hash'],
    );
    for (const content of ['v2\n', 'v3\n'])
      assert.equal(
        (await req(server, 'POST', '/api/v1/paste_edit.php', { token, body: { hash, content } })).status,
        200,
      );
    const file = join(server.dataDir, 'pastes', hash.slice(0, 2), `${hash.slice(0, 6)}.r1.json`);
    await writeFile(file, (await readFile(file, 'utf8')).slice(0, 30));

    const raw = await req(server, 'GET', `/api/v1/raw.php?hash=${hash}&revision=1`, { token });
    assert.equal(raw.status, 500);
    assert.equal(raw.json['code'], 'paste_damaged');
    assert.equal((await req(server, 'GET', `/api/v1/raw.php?hash=${hash}&revision=2`, { token })).text, 'v2\n');
    const visitor = new WebClient(server);
    const history = await visitor.get(`/p/${hash}/history`);
    assert.equal(history.status, 200);
    assert.match(history.text, /<td data-label="Saved">damaged<\/td><td data-label="Size">\?<\/td>/);
    assert.match(history.text, /<span class="tk-add">\+ v3<\/span>/, 'the last two still compare');
    const withDamaged = await visitor.get(`/p/${hash}/history?from=1&to=3`);
    assert.equal(withDamaged.status, 200);
    assert.match(withDamaged.text, /Revision 1 cannot be read: its file on the server is damaged/);
  });
});
