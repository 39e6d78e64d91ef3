import assert from 'node:assert/strict';
import { readdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { runCli } from '../src/cli.ts';
import { cleanup, cli, makeToken, req, startServer, tempDataDir, type AppServer } from './helpers/server.ts';
import { WebClient } from './helpers/web-client.ts';

/**
 * A stored password hash whose scrypt parameters this server does not accept (README,
 * Security and durability), found in the data folder or in a backup: checks against it fail
 * closed at once, with one log line, and a restore refuses the archive.
 */
const BAD: Record<string, (h: string) => string> = {
  'p=40000': (h) => h.replace(/^scrypt\$16384\$8\$1\$/, 'scrypt$16384$8$40000$'),
  'N=3': (h) => h.replace(/^scrypt\$16384\$/, 'scrypt$3$'),
  'N=2^30': (h) => h.replace(/^scrypt\$16384\$/, 'scrypt$1073741824$'),
};

/** The file of a paste's current version. */
async function pasteFile(dataDir: string, hash: string): Promise<string> {
  for (const shard of await readdir(join(dataDir, 'pastes'))) {
    for (const name of await readdir(join(dataDir, 'pastes', shard)))
      if (name === `${hash.slice(0, 6)}.json`) return join(dataDir, 'pastes', shard, name);
  }
  throw new Error(`no file for ${hash}`);
}

/** Rewrites a paste's stored hash in place; the server must be stopped (it caches pastes). */
async function spoilPaste(dataDir: string, hash: string, spoil: (h: string) => string): Promise<void> {
  const file = await pasteFile(dataDir, hash);
  const record = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>;
  record['password'] = spoil(record['password'] as string);
  await writeFile(file, JSON.stringify(record));
}

async function withPasswordPastes(a: AppServer): Promise<Record<string, string>> {
  const token = await makeToken(a.dataDir, { user: 'alice' });
  const hashes: Record<string, string> = {};
  for (const name of Object.keys(BAD)) {
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
    for (const [name, hash] of Object.entries(hashes)) await spoilPaste(first.dataDir, hash, BAD[name] as never);
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
    // Replaced whole, as every writer of the accounts file does (the server watches for the rename).
    const file = join(a.dataDir, 'accounts.json');
    const doc = JSON.parse(await readFile(file, 'utf8')) as { users: { name: string; password: string }[] };
    for (const u of doc.users)
      if (u.name === 'carol') u.password = (BAD['p=40000'] as (h: string) => string)(u.password);
    await writeFile(`${file}.new`, JSON.stringify(doc));
    await rename(`${file}.new`, file);
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

  test('restore refuses an archive holding one, naming the file, and replaces nothing', async () => {
    const first = await startServer();
    const hashes = await withPasswordPastes(first);
    await first.stop();
    await spoilPaste(first.dataDir, hashes['p=40000'] as string, BAD['p=40000'] as (h: string) => string);
    const archive = join(first.dataDir, '..', `spoilt-${Date.now()}.tar.gz`);
    const io = { env: { DATA_DIR: first.dataDir }, stdout: () => undefined, readStdin: async () => '' };
    await runCli(['backup', archive], io);
    const into = await tempDataDir();
    try {
      await cli(into, ['user', 'add', 'keeper']);
      const before = await readFile(join(into, 'accounts.json'), 'utf8');
      await assert.rejects(
        runCli(['restore', archive, '--force'], { ...io, env: { DATA_DIR: into } }),
        /pastes\/.*\.json: its password is refused \(scrypt parameters this server does not accept: p is 40000.*nothing was changed/,
      );
      assert.equal(await readFile(join(into, 'accounts.json'), 'utf8'), before);
    } finally {
      await cleanup(into);
      await cleanup(archive);
    }
  });
  test('restore refuses an archive whose accounts.json holds one for a user, naming the user', async () => {
    const dataDir = await tempDataDir();
    const into = await tempDataDir();
    const archive = join(dataDir, '..', `spoilt-users-${Date.now()}.tar.gz`);
    try {
      await cli(dataDir, ['user', 'add', 'erin', '--password-stdin'], 'erin-password');
      const file = join(dataDir, 'accounts.json');
      const doc = JSON.parse(await readFile(file, 'utf8')) as { users: { name: string; password: string }[] };
      for (const u of doc.users) u.password = (BAD['N=3'] as (h: string) => string)(u.password);
      await writeFile(file, JSON.stringify(doc));
      const io = { env: { DATA_DIR: dataDir }, stdout: () => undefined, readStdin: async () => '' };
      await runCli(['backup', archive], io);
      await assert.rejects(
        runCli(['restore', archive], { ...io, env: { DATA_DIR: into } }),
        /accounts\.json: user "erin"'s password is refused \(scrypt parameters this server does not accept: N is 3.*nothing was changed/,
      );
      assert.deepEqual(await readdir(into), []);
    } finally {
      await Promise.all([cleanup(dataDir), cleanup(into), cleanup(archive)]);
    }
  });
});
