import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmod, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { cleanup, makeToken, req, spawnServer, tempDataDir } from '../helpers/server.ts';
import { oneEvent, oneLine, runScript } from '../helpers/start-errors.ts';

describe('start-up and CLI errors name the file or folder, in one line', () => {
  test('a truncated accounts.json', async () => {
    const dir = await tempDataDir();
    try {
      await writeFile(join(dir, 'accounts.json'), '{"version":1,"next_user_id":2,"users":[{"id":1,"na');
      const server = await runScript('main', { DATA_DIR: dir });
      assert.equal(server.code, 1);
      oneEvent(
        server.out,
        new RegExp(
          `^cannot start: ${join(dir, 'accounts.json')} is damaged: it is not valid JSON \\(cut short\\?\\); restore it from a backup$`,
        ),
      );
      const cli = await runScript('cli', { DATA_DIR: dir }, ['user', 'list']);
      assert.equal(cli.code, 1);
      oneLine(cli.out, new RegExp(`^error: ${join(dir, 'accounts.json')} is damaged: `));
    } finally {
      await cleanup(dir);
    }
  });

  test('a format.json that is not JSON, in a folder with data: named, and nothing is migrated', async () => {
    const dir = await tempDataDir();
    try {
      assert.equal((await runScript('cli', { DATA_DIR: dir }, ['user', 'add', 'zed'])).code, 0);
      await writeFile(join(dir, 'format.json'), 'garbage');
      const server = await runScript('main', { DATA_DIR: dir });
      assert.equal(server.code, 1);
      oneEvent(server.out, new RegExp(`^cannot start: ${join(dir, 'format.json')} is damaged: it is not JSON`));
      const cli = await runScript('cli', { DATA_DIR: dir }, ['user', 'list']);
      assert.equal(cli.code, 1);
      oneLine(cli.out, new RegExp(`^error: ${join(dir, 'format.json')} is damaged: it is not JSON`));
      assert.equal(await readFile(join(dir, 'format.json'), 'utf8'), 'garbage', 'left for the operator to mend');
      assert.equal((await readdir(dir)).includes('backups'), false, 'no migration was begun');
    } finally {
      await cleanup(dir);
    }
  });

  test('one server per data folder: a second is refused, and so is a restore, while the first runs; a crashed one’s claim is stale', async () => {
    const first = await spawnServer();
    const dir = first.dataDir;
    try {
      const claim = await readFile(join(dir, 'server.pid'), 'utf8');
      assert.match(claim, new RegExp(`^${first.proc.pid} \\S+\\n$`));
      const second = await runScript('main', { DATA_DIR: dir });
      assert.equal(second.code, 1);
      oneEvent(
        second.out,
        new RegExp(
          `^cannot start: ${join(dir, 'server.pid')}: the server with pid ${first.proc.pid} on \\S+ is using this data folder; stop it first`,
        ),
      );
      const token = await makeToken(dir);
      assert.equal(
        (await req(first, 'GET', '/api/v1/paste.php?hash=AAAAAAAAAA', { token })).status,
        404,
        'the first serves on',
      );
      const archive = join(dir, '..', `${dir.split('/').at(-1) ?? 'x'}.tar.gz`);
      assert.equal((await runScript('cli', { DATA_DIR: dir }, ['backup', archive])).code, 0);
      const restore = await runScript('cli', { DATA_DIR: dir }, ['restore', archive, '--force']);
      assert.equal(restore.code, 1);
      oneLine(
        restore.out,
        new RegExp(`^error: the server with pid ${first.proc.pid} on \\S+ is using ${dir}; stop it before restoring`),
      );
      await rm(archive, { force: true });
    } finally {
      await first.stop();
    }
    try {
      await assert.rejects(readFile(join(dir, 'server.pid')), /ENOENT/, 'a clean stop gives the claim up');
      // A claim left by a process that is gone (a crash) does not hold the folder.
      const gone = spawnSync(process.execPath, ['-e', '0']);
      await writeFile(join(dir, 'server.pid'), `${gone.pid} ${hostname()}\n`);
      const next = await spawnServer({ dataDir: dir });
      await next.stop();
    } finally {
      await cleanup(dir);
    }
  });

  test('a read-only data folder is refused at start, naming it', async () => {
    const parent = await tempDataDir();
    const dir = join(parent, 'data');
    await mkdir(dir);
    let uid: number | undefined;
    // Root writes anywhere but on a read-only mount; without one, run as an unprivileged user.
    const mounted =
      process.getuid?.() === 0 && spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=1m,ro', 'tmpfs', dir]).status === 0;
    if (!mounted) {
      await chmod(dir, 0o555);
      await chmod(parent, 0o755);
      if (process.getuid?.() === 0) uid = 65534;
    }
    try {
      const server = await runScript('main', { DATA_DIR: dir }, [], uid);
      assert.equal(server.code, 1);
      oneEvent(
        server.out,
        new RegExp(
          `^cannot start: ${dir} cannot be written \\((EROFS: read-only file system|EACCES: permission denied)\\)$`,
        ),
      );
      const cli = await runScript('cli', { DATA_DIR: dir }, ['user', 'add', 'zed'], uid);
      assert.equal(cli.code, 1);
      oneLine(cli.out, new RegExp(`^error: ${dir}.* cannot be written`));
    } finally {
      if (mounted) spawnSync('umount', [dir]);
      await chmod(dir, 0o755).catch(() => undefined);
      await cleanup(parent);
    }
  });

  test('a data folder written by a newer version is refused; a folder without format.json gets one', async () => {
    const dir = await tempDataDir();
    try {
      await writeFile(join(dir, 'format.json'), '{"format":99}');
      const server = await runScript('main', { DATA_DIR: dir });
      assert.equal(server.code, 1);
      oneEvent(
        server.out,
        new RegExp(
          `^cannot start: ${join(dir, 'format.json')} says data format 99, and this version reads format 3 at most: run the newer version that wrote it$`,
        ),
      );
      const cli = await runScript('cli', { DATA_DIR: dir }, ['token', 'list']);
      assert.equal(cli.code, 1);
      oneLine(cli.out, /^error: .*format\.json says data format 99/);
      await rm(join(dir, 'format.json'));
      const fresh = await spawnServer({ dataDir: dir });
      await fresh.stop();
      assert.deepEqual(JSON.parse(await readFile(join(dir, 'format.json'), 'utf8')), { format: 3 });
      assert.deepEqual(
        await readdir(dir).then((n) => n.includes('backups')),
        false,
        'a new folder has nothing to back up',
      );
    } finally {
      await cleanup(dir);
    }
  });

  test('a HOST no resolver knows, and a file where DATA_DIR should be', async () => {
    const dir = await tempDataDir();
    try {
      const unknown = await runScript('main', { DATA_DIR: dir, HOST: 'no-such-host.invalid' });
      assert.equal(unknown.code, 1);
      oneEvent(
        unknown.out,
        /^cannot start: HOST no-such-host\.invalid is not a name this machine can resolve \((ENOTFOUND|EAI_AGAIN)\)$/,
      );
      await writeFile(join(dir, 'a-file'), 'x');
      const file = await runScript('main', { DATA_DIR: join(dir, 'a-file') });
      assert.equal(file.code, 1);
      oneEvent(
        file.out,
        new RegExp(
          `^cannot start: ${join(dir, 'a-file')}: a file is in the way where a folder should be \\(EEXIST\\)$`,
        ),
      );
    } finally {
      await cleanup(dir);
    }
  });
});

describe('a log folder that cannot be written', () => {
  test('the server keeps serving, and at shutdown says how many log lines were lost', async () => {
    const dir = await tempDataDir();
    // A file where the logs folder should be: no log line can be written.
    await writeFile(join(dir, 'logs'), 'not a folder');
    const server = await spawnServer({ dataDir: dir });
    try {
      const token = await makeToken(dir);
      for (let i = 0; i < 12; i++)
        assert.equal((await req(server, 'GET', '/api/v1/paste.php?hash=AAAAAAAAAA', { token })).status, 404);
      assert.equal(await server.stop('SIGTERM'), 0);
      const out = server.output();
      assert.match(out, /shutdown complete/);
      assert.match(
        out,
        new RegExp(
          `"level":"warn","message":"12 API log lines could not be written to ${join(dir, 'logs')} and are lost`,
        ),
      );
    } finally {
      await cleanup(dir);
    }
  });
});
