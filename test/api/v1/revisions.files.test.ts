import assert from 'node:assert/strict';
import { copyFile, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { makeToken, req, startServer, type AppServer } from '../../helpers/server.ts';
import { WebClient } from '../../helpers/web-client.ts';

/**
 * Revisions as the data folder keeps them, one file each: a revision file an earlier version
 * of the server left, and a damaged one (revisions.test.ts holds what every backend does).
 */

const revisionFiles = async (server: AppServer, hash: string): Promise<string[]> =>
  (await readdir(join(server.dataDir, 'pastes', hash.slice(0, 2))))
    .filter((f) => f.startsWith(`${hash.slice(0, 6)}.r`))
    .sort();

describe('revisions', () => {
  test('a one-time paste keeps no revisions, and neither the API nor the History page reads it without burning it', async () => {
    const server = await startServer();
    const token = await makeToken(server.dataDir);
    const hash = String(
      (await req(server, 'POST', '/api/v1/paste_create.php', { token, body: { content: 'first', burn_after_read: 1 } }))
        .json['hash'],
    );
    // A revision an earlier version of the server kept for it goes at the next edit.
    const dir = join(server.dataDir, 'pastes', hash.slice(0, 2));
    await copyFile(join(dir, `${hash.slice(0, 6)}.json`), join(dir, `${hash.slice(0, 6)}.r1.json`));
    assert.equal(
      (await req(server, 'POST', '/api/v1/paste_edit.php', { token, body: { hash, content: 'second' } })).status,
      200,
    );
    assert.deepEqual(await revisionFiles(server, hash), [], 'the replaced text of a one-time paste is not kept');

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
});

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
