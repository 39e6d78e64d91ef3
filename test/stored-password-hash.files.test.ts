import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { runCli } from '../src/cli.ts';
import { cleanup, cli, makeToken, req, startServer, tempDataDir } from './helpers/server.ts';
import { plantPastePassword, plantUserPassword } from './helpers/stored.ts';
import { refused } from './helpers/refused-hashes.ts';

/**
 * A backup holding a stored password hash whose scrypt parameters this server does not
 * accept is refused at restore (README, Security and durability). Backup and restore are the
 * data folder's: on PostgreSQL the CLI refuses them and names pg_dump, so these cases have no
 * PostgreSQL run (stored-password-hash.test.ts has those on both backends).
 */
describe('a restore and stored password hashes outside the accepted parameters', () => {
  test('restore refuses an archive holding one, naming the file, and replaces nothing', async () => {
    const first = await startServer();
    const token = await makeToken(first.dataDir);
    const made = await req(first, 'POST', '/api/v1/paste_create.php', {
      token,
      body: { content: 'x', password: 'pw' },
    });
    assert.equal(made.status, 200, made.text);
    const hash = String(made.json['hash']);
    await first.stop();
    await plantPastePassword(first.dataDir, hash, refused('p=40000'));
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
      await plantUserPassword(dataDir, 'erin', refused('N=3'));
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
