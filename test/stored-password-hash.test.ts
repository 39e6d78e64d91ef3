import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { cli, makeToken, req, startServer, type AppServer } from './helpers/server.ts';
import { plantPastePassword, plantUserPassword } from './helpers/stored.ts';
import { REFUSED_HASHES, refused } from './helpers/refused-hashes.ts';
import { WebClient } from './helpers/web-client.ts';

/**
 * A stored password hash whose scrypt parameters this server does not accept (README,
 * Security and durability), found where the backend keeps it (a paste's file or row, the
 * accounts file or rows): checks against it fail closed at once, with one log line. That a
 * restore refuses an archive holding one is the data folder's (stored-password-hash.files.test.ts).
 */

async function withPasswordPastes(a: AppServer): Promise<Record<string, string>> {
  const token = await makeToken(a.dataDir, { user: 'alice' });
  const hashes: Record<string, string> = {};
  for (const name of Object.keys(REFUSED_HASHES)) {
    const r = await req(a, 'POST', '/api/v1/paste_create.php', {
      token,
      body: { content: name, password: 'right-one' },
    });
    assert.equal(r.status, 200, r.text);
    hashes[name] = r.json?.['hash'] as string;
  }
  return hashes;
}

describe('stored password hashes outside the accepted parameters', () => {
  test('a paste loaded with one answers 403 to every password, at once, and the log says so once', async () => {
    const first = await startServer();
    const hashes = await withPasswordPastes(first);
    await first.stop();
    for (const [name, hash] of Object.entries(hashes)) await plantPastePassword(first.dataDir, hash, refused(name));
    const a = await startServer({ dataDir: first.dataDir });
    const reader = await makeToken(a.dataDir, { user: 'bob', scopes: 'read' });
    for (const [name, hash] of Object.entries(hashes)) {
      for (const password of ['right-one', 'wrong-one']) {
        const started = Date.now();
        const r = await req(a, 'GET', `/api/v1/paste.php?hash=${hash}&password=${password}`, { token: reader });
        assert.equal(r.status, 403, `${name}: ${r.text}`);
        assert.equal(r.json?.['error'], 'Invalid password');
        assert.ok(Date.now() - started < 2_000, `${name} answered at once`);
      }
      const lines = a
        .output()
        .split('\n')
        .filter((l) => l.startsWith(`paste ${hash}:`));
      assert.equal(lines.length, 1, a.output());
      assert.match(lines[0] ?? '', /stored password hash is refused \(scrypt parameters this server does not accept/);
    }
    assert.doesNotMatch(a.output(), /RangeError|right-one|wrong-one/);
  });

  test('a user whose stored hash has p=40000 cannot log in on the web, is told "wrong", and the log says why', async () => {
    const a = await startServer();
    await cli(a.dataDir, ['user', 'add', 'carol', '--password-stdin'], 'carol-password');
    await cli(a.dataDir, ['user', 'add', 'dave', '--password-stdin'], 'dave-password');
    // Written as another writer of the accounts would: the running server takes it up.
    await plantUserPassword(a.dataDir, 'carol', refused('p=40000'));
    const c = new WebClient(a);
    await c.get('/login');
    const started = Date.now();
    const right = await c.post('/login', { name: 'carol', password: 'carol-password', next: '/' });
    const wrong = await c.post('/login', { name: 'dave', password: 'not-daves', next: '/' });
    assert.ok(Date.now() - started < 5_000);
    assert.equal(right.status, wrong.status, right.text);
    assert.notEqual(right.status, 303);
    assert.match(a.output(), /^user "carol": its stored password hash is refused \(.*p is 40000/m);
  });
});
