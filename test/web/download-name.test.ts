import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { downloadName } from '../../src/web/pages/paste.ts';
import { makeToken, req, startServer } from '../helpers/server.ts';

describe('a download is named from the title, the language’s extension last', () => {
  const name = (title: string, language: string): string => downloadName({ title, hash: 'aB3dE5gH7j', language });

  test('a title that ends in another extension keeps it, and gets the language’s after it', () => {
    assert.equal(name('setup.exe', 'text'), 'setup.exe.txt');
    assert.equal(name('report.html', 'text'), 'report.html.txt');
    assert.equal(name('notes.sh', 'python'), 'notes.sh.py');
  });

  test('a title already ending in the language’s extension is kept; no title names the paste', () => {
    assert.equal(name('main.py', 'python'), 'main.py');
    assert.equal(name('Notes.TXT', 'text'), 'Notes.TXT');
    assert.equal(name('', 'text'), 'paste-aB3dE5gH7j.txt');
    assert.equal(name('../../etc/passwd', 'text'), 'etc-passwd.txt');
  });

  test('the Download link sends that name', async () => {
    const s = await startServer();
    const token = await makeToken(s.dataDir);
    const made = await req(s, 'POST', '/api/v1/paste_create.php', {
      token,
      body: { content: 'echo hi', title: 'setup.exe', language: 'text' },
    });
    const r = await req(s, 'GET', `/p/${made.json?.['hash'] as string}/raw?download=1`);
    assert.equal(r.status, 200);
    assert.equal(r.headers['content-disposition'], 'attachment; filename="setup.exe.txt"');
  });
});
