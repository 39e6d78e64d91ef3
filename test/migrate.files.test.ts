import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { sendFiles, sha256 } from './helpers/multipart.ts';
import { cleanup, events, makeToken, req, ROOT, spawnServer, tempDataDir } from './helpers/server.ts';
import { runScript } from './helpers/start-errors.ts';
import { login, WebClient } from './helpers/web-client.ts';
import { runCli } from '../src/cli.ts';

const FIXTURE = join(ROOT, 'test/fixtures/format-1/data');
const TOKEN = 'pst_rWQrOsRT_a6YEUh2pL6ZnZG9RBwpNfZQ2F0qTDodY';
const SESSION = '-ZOJqsIJUriaoom7WWiLfApoRRQZzcIFNlfW7XRkIGw';

const backupsOf = async (dir: string): Promise<string[]> =>
  (await readdir(join(dir, 'backups')).catch(() => [])).sort();

test('a format 1 folder is backed up, migrated to format 3 at start, and serves every paste, token, session and login as before', async () => {
  const dir = await tempDataDir();
  try {
    await cp(FIXTURE, dir, { recursive: true });
    const originalAccounts = await readFile(join(dir, 'accounts.json'));
    // The session in the fixture is older than the default idle limit allows.
    const server = await spawnServer({ dataDir: dir, env: { SESSION_IDLE_DAYS: '3650' } });
    try {
      const backups = await backupsOf(dir);
      assert.equal(backups.length, 1);
      assert.match(backups[0] ?? '', /^before-format-3-\d{4}-\d\d-\d\dT[\d-]+Z\.tar\.gz$/);
      const note = events(server.output()).filter((e) => e.message.startsWith('data format'));
      assert.deepEqual(
        note.map((e) => [e.level, e.message]),
        [
          [
            'info',
            `data format 1 migrated to 3; the data as it was is backed up in ${join(dir, 'backups', backups[0] as string)}`,
          ],
        ],
      );
      assert.deepEqual(JSON.parse(await readFile(join(dir, 'format.json'), 'utf8')), { format: 3 });
      const accounts = JSON.parse(await readFile(join(dir, 'accounts.json'), 'utf8')) as {
        users: Record<string, unknown>[];
      };
      assert.deepEqual([accounts.users[0]?.['disabled'], accounts.users[0]?.['last_login_at']], [false, null]);

      // The backup holds the folder as it was: format 1, the accounts byte for byte.
      const archive = join(dir, 'backups', backups[0] as string);
      const listed = execFileSync('tar', ['-tzf', archive], { encoding: 'utf8' });
      assert.match(listed, /^pastes\/b6\/b6H9OS\.r1\.json$/m);
      assert.ok(Buffer.from(execFileSync('tar', ['-xzOf', archive, 'accounts.json'])).equals(originalAccounts));
      assert.equal(execFileSync('tar', ['-xzOf', archive, 'format.json'], { encoding: 'utf8' }).trim(), '{"format":1}');

      const get = (q: string): ReturnType<typeof req> => req(server, 'GET', `/api/v1/paste.php?${q}`, { token: TOKEN });
      const plain = await get('hash=xWVBX8Gkj2');
      assert.equal(plain.status, 200);
      assert.deepEqual(
        [
          (plain.json!['paste'] as Record<string, unknown>)['content'],
          (plain.json!['paste'] as Record<string, unknown>)['title'],
        ],
        ['hello from format 1', 'Plain'],
      );
      const other = await makeToken(dir, { user: 'pete' });
      assert.equal(
        (await req(server, 'GET', '/api/v1/raw.php?hash=lHOkJypGZi&password=pw', { token: other })).text,
        'secret text',
      );
      assert.equal(
        (await req(server, 'GET', '/api/v1/raw.php?hash=lHOkJypGZi&password=nope', { token: other })).status,
        403,
      );
      const burned = await get('hash=vbM7iRk8dc');
      assert.equal(burned.status, 410);
      assert.equal((burned.json!['receipt'] as Record<string, unknown>)['via'], 'api');
      const edited = await get('hash=b6H9OSDZTS');
      assert.deepEqual(
        [
          (edited.json!['paste'] as Record<string, unknown>)['content'],
          (edited.json!['paste'] as Record<string, unknown>)['revision'],
        ],
        ['second version', 2],
      );
      assert.equal(
        (await req(server, 'GET', '/api/v1/raw.php?hash=b6H9OSDZTS&revision=1', { token: TOKEN })).text,
        'first version',
      );

      const web = new WebClient(server);
      web.cookies.set('paste_sid', SESSION);
      const my = await web.get('/my');
      assert.equal(my.status, 200, 'the session from before the migration');
      for (const hash of ['xWVBX8Gkj2', 'lHOkJypGZi', 'ygVOjziYB6', 'b6H9OSDZTS'])
        assert.ok(my.text.includes(`/p/${hash}`), hash);
      await login(new WebClient(server), 'olga');
    } finally {
      await server.stop();
    }

    // Started again: nothing more to do.
    const again = await spawnServer({ dataDir: dir });
    await again.stop();
    assert.equal((await backupsOf(dir)).length, 1);
    assert.ok(!again.output().includes('migrated'));

    // A migration cut short (format.json not yet written) runs again and changes nothing more.
    const migrated = await readFile(join(dir, 'accounts.json'), 'utf8');
    await writeFile(join(dir, 'format.json'), '{"format":1}');
    const lines: string[] = [];
    await runCli(['token', 'list'], {
      env: { DATA_DIR: dir },
      stdout: () => undefined,
      stderr: (l) => lines.push(l),
      readStdin: async () => '',
    });
    assert.match(lines[0] ?? '', /^note: data format 1 migrated to 3; the data as it was is backed up in /);
    assert.equal((await backupsOf(dir)).length, 2);
    const twice = JSON.parse(await readFile(join(dir, 'accounts.json'), 'utf8')) as {
      users: Record<string, unknown>[];
    };
    const once = JSON.parse(migrated) as { users: Record<string, unknown>[] };
    assert.deepEqual(
      twice.users.map((u) => [u['disabled'], u['name']]),
      once.users.map((u) => [u['disabled'], u['name']]),
    );
  } finally {
    await cleanup(dir);
  }
});

test('a folder with data but no format.json is format 1: it is backed up and migrated too', async () => {
  const dir = await tempDataDir();
  try {
    await cp(FIXTURE, dir, { recursive: true });
    await rm(join(dir, 'format.json'));
    const out: string[] = [];
    await runCli(['user', 'list'], {
      env: { DATA_DIR: dir },
      stdout: (l) => out.push(l),
      stderr: () => undefined,
      readStdin: async () => '',
    });
    assert.match(out[0] ?? '', /^1\s+olga\s+admin\s+enabled/);
    assert.equal((await backupsOf(dir)).length, 1);
    assert.deepEqual(JSON.parse(await readFile(join(dir, 'format.json'), 'utf8')), { format: 3 });
  } finally {
    await cleanup(dir);
  }
});

test('a format 2 folder holding files is backed up and marked format 3 at start, and its files read as before', async () => {
  const dir = await tempDataDir();
  try {
    const bytes = Buffer.from('log line\n'.repeat(5000));
    const first = await spawnServer({ dataDir: dir });
    let hash: string;
    try {
      const token = await makeToken(dir, { user: 'alice' });
      const made = await sendFiles(first, token, { content: 'see the log' }, [{ name: 'app.log', bytes }]);
      assert.equal(made.status, 200, made.text);
      hash = made.json!['hash'] as string;
    } finally {
      await first.stop();
    }
    // As a version that took files but still said format 2 left it.
    await writeFile(join(dir, 'format.json'), '{"format":2}\n');

    const server = await spawnServer({ dataDir: dir });
    try {
      const backups = await backupsOf(dir);
      assert.equal(backups.length, 1);
      assert.match(backups[0] ?? '', /^before-format-3-/);
      const archive = join(dir, 'backups', backups[0] as string);
      assert.deepEqual(
        events(server.output())
          .filter((e) => e.message.startsWith('data format'))
          .map((e) => e.message),
        [`data format 2 migrated to 3; the data as it was is backed up in ${archive}`],
      );
      assert.deepEqual(JSON.parse(await readFile(join(dir, 'format.json'), 'utf8')), { format: 3 });
      // The backup holds the folder as it was: format 2, the file's bytes under their hash.
      assert.equal(execFileSync('tar', ['-xzOf', archive, 'format.json'], { encoding: 'utf8' }).trim(), '{"format":2}');
      const held = `files/${sha256(bytes).slice(0, 2)}/${sha256(bytes)}`;
      assert.ok(Buffer.from(execFileSync('tar', ['-xzOf', archive, held], { maxBuffer: 1 << 20 })).equals(bytes));
      const token = await makeToken(dir, { user: 'alice' });
      const file = await fetch(`${server.url}/api/v1/file.php?hash=${hash}&name=app.log`, {
        headers: { authorization: `Bearer ${token}` },
      });
      assert.equal(file.status, 200);
      assert.ok(Buffer.from(await file.arrayBuffer()).equals(bytes), 'byte for byte');
    } finally {
      await server.stop();
    }
  } finally {
    await cleanup(dir);
  }
});

test('a folder that says format 4 is refused by the server and the CLI, and left as it was', async () => {
  const dir = await tempDataDir();
  try {
    await cp(FIXTURE, dir, { recursive: true });
    await writeFile(join(dir, 'format.json'), '{"format":4}');
    const refusal = `${join(dir, 'format.json')} says data format 4, and this version reads format 3 at most: run the newer version that wrote it`;
    const server = await runScript('main', { DATA_DIR: dir });
    assert.equal(server.code, 1);
    assert.ok(
      events(server.out).some((e) => e.message === `cannot start: ${refusal}`),
      server.out,
    );
    const cli = await runScript('cli', { DATA_DIR: dir }, ['user', 'list']);
    assert.equal(cli.code, 1);
    assert.ok(cli.out.split('\n').includes(`error: ${refusal}`), cli.out);
    assert.equal(await readFile(join(dir, 'format.json'), 'utf8'), '{"format":4}');
    assert.deepEqual(await backupsOf(dir), [], 'nothing backed up or migrated');
  } finally {
    await cleanup(dir);
  }
});
