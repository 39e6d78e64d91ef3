import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { hostname } from 'node:os';
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { runCli } from '../src/cli.ts';
import { finishRestore } from '../src/store/restore-swap.ts';
import { cleanup, cli, makeToken, req, ROOT, startServer, tempDataDir, type AppServer } from './helpers/server.ts';
import { login, WebClient } from './helpers/web-client.ts';
import { until } from './helpers/until.ts';

const CLIENTS = 16;
const STABLE = 6;
const MUTABLE = 4;

/** The CLI as its own process, as an operator runs it beside the server. */
function cliProcess(dataDir: string, args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'src/cli.ts'), ...args], {
      cwd: ROOT,
      env: { ...process.env, DATA_DIR: dataDir },
    });
    let out = '';
    let err = '';
    p.stdout.on('data', (d: Buffer) => (out += d.toString()));
    p.stderr.on('data', (d: Buffer) => (err += d.toString()));
    p.on('exit', (code) => resolve({ code, out, err }));
  });
}

async function restore(file: string, dataDir: string, force = false): Promise<string> {
  const out: string[] = [];
  await runCli(['restore', file, ...(force ? ['--force'] : [])], {
    env: { DATA_DIR: dataDir },
    stdout: (l) => out.push(l),
    readStdin: async () => '',
  });
  return out.join('\n');
}

interface Client {
  token: string;
  stable: Map<string, string>;
  /** Every content each mutable paste was ever sent (acknowledged or not), and whether a delete was tried. */
  mutable: Map<string, { versions: Set<string>; deleteTried: boolean }>;
  /** Creates made while the backup ran: the content sent, and the hash once acknowledged. */
  during: { content: string; hash: string | null }[];
}

describe('backup and restore', () => {
  let a: AppServer;
  let archive: string;
  let work: string;
  const clients: Client[] = [];
  let sessionCookie = '';
  let rawBefore = new Map<string, string>();
  let expiringHash = '';

  before(async () => {
    work = await tempDataDir();
    archive = join(work, 'backup.tar.gz');
    a = await startServer();
    await cli(a.dataDir, ['user', 'add', 'alice', '--admin', '--password-stdin'], 'password123');
    const web = new WebClient(a);
    await login(web, 'alice');
    sessionCookie = web.cookieHeader();
    for (let i = 0; i < CLIENTS; i++) {
      const c: Client = {
        token: await makeToken(a.dataDir, { user: `c${i}` }),
        stable: new Map(),
        mutable: new Map(),
        during: [],
      };
      for (let j = 0; j < STABLE + MUTABLE; j++) {
        const content = `client ${i} paste ${j}\n${'x'.repeat(j * 300)}`;
        const r = await req(a, 'POST', '/api/v1/paste_create.php', {
          token: c.token,
          body: {
            content,
            title: `t${i}.${j}`,
            privacy: j % 3 === 0 ? 'private' : 'unlisted',
            ...(j === 1 ? { password: 'pw' } : {}),
          },
        });
        assert.equal(r.status, 200);
        const hash = r.json?.['hash'] as string;
        if (j < STABLE) c.stable.set(hash, content);
        else c.mutable.set(hash, { versions: new Set([content]), deleteTried: false });
      }
      clients.push(c);
    }
    const expiring = await req(a, 'POST', '/api/v1/paste_create.php', {
      token: (clients[0] as Client).token,
      body: { content: 'for a day', expiry: '1d' },
    });
    expiringHash = expiring.json?.['hash'] as string;
    rawBefore = new Map();
    for (const c of clients)
      for (const hash of c.stable.keys())
        rawBefore.set(hash, (await req(a, 'GET', `/api/v1/raw.php?hash=${hash}&password=pw`, { token: c.token })).text);
  });
  after(async () => {
    await a.stop();
    await cleanup(work);
  });

  test('a backup taken while 16 clients create, edit and delete restores every acknowledged paste, token and login', async () => {
    let running = true;
    let n = 0;
    const loop = async (c: Client, i: number): Promise<void> => {
      const mutable = [...c.mutable.keys()];
      while (running) {
        const k = n++;
        const op = k % 4;
        if (op === 0 || op === 1) {
          const content = `during ${i}.${k}`;
          const entry: Client['during'][number] = { content, hash: null };
          c.during.push(entry);
          const r = await req(a, 'POST', '/api/v1/paste_create.php', { token: c.token, body: { content } });
          if (r.status === 200) entry.hash = r.json?.['hash'] as string;
        } else if (op === 2) {
          const hash = mutable[k % (MUTABLE - 1)] as string;
          const content = `edit ${i}.${k}`;
          (c.mutable.get(hash) as { versions: Set<string> }).versions.add(content);
          await req(a, 'POST', '/api/v1/paste_edit.php', { token: c.token, body: { hash, content } });
        } else if (k % 40 === 3) {
          // The last mutable paste of each client is deleted once.
          const hash = mutable[MUTABLE - 1] as string;
          (c.mutable.get(hash) as { deleteTried: boolean }).deleteTried = true;
          await req(a, 'POST', '/api/v1/paste_delete.php', { token: c.token, body: { hash } });
        } else {
          await req(a, 'GET', `/api/v1/paste.php?hash=${[...c.stable.keys()][k % STABLE]}&password=pw`, {
            token: c.token,
          });
        }
      }
    };
    const loops = clients.map((c, i) => loop(c, i));
    await until(() => clients.some((c) => c.during.some((d) => d.hash !== null)), {
      what: 'the first write acknowledged before the backup starts',
    });
    const done = await cliProcess(a.dataDir, ['backup', archive]);
    running = false;
    await Promise.all(loops);
    assert.equal(done.code, 0, done.err);
    assert.match(done.out, /backup\.tar\.gz: \d+ files \(\d+ pastes\), \d+ bytes before compression\n$/);
    assert.ok(
      clients.reduce((sum, c) => sum + c.during.filter((d) => d.hash !== null).length, 0) > 16,
      'writes really ran during the backup',
    );

    // Any tar lists it: a manifest last, accounts before it.
    const listed = execFileSync('tar', ['-tzf', archive], { encoding: 'utf8' }).trim().split('\n');
    assert.deepEqual(listed.slice(-2), ['accounts.json', 'MANIFEST.json']);
    assert.ok(
      listed.includes('format.json') &&
        listed.some((l) => l.startsWith('pastes/')) &&
        listed.some((l) => l.startsWith('sessions/')),
    );
    assert.ok(
      !listed.some(
        (l) =>
          l.startsWith('tmp/') ||
          l.startsWith('owners/') ||
          l.startsWith('expiry/') ||
          l.startsWith('logs/') ||
          l.endsWith('.lock'),
      ),
    );

    const dir = await tempDataDir();
    try {
      assert.match(await restore(archive, dir), /^restored \d+ files \(\d+ pastes\) from a backup made \d{4}-/);
      const b = await startServer({ dataDir: dir });
      try {
        for (const c of clients) {
          for (const [hash, content] of c.stable) {
            const r = await req(b, 'GET', `/api/v1/raw.php?hash=${hash}&password=pw`, { token: c.token });
            assert.equal(r.status, 200, `stable ${hash}`);
            assert.equal(r.text, content);
            assert.equal(r.text, rawBefore.get(hash));
          }
          for (const [hash, m] of c.mutable) {
            const r = await req(b, 'GET', `/api/v1/raw.php?hash=${hash}`, { token: c.token });
            if (r.status === 404) assert.ok(m.deleteTried, `${hash} went missing without a delete`);
            else {
              assert.equal(r.status, 200);
              assert.ok(m.versions.has(r.text), `${hash} holds a version that was sent`);
            }
          }
          const sent = new Set(c.during.map((d) => d.content));
          for (const d of c.during) {
            if (d.hash === null) continue;
            const r = await req(b, 'GET', `/api/v1/raw.php?hash=${d.hash}`, { token: c.token });
            assert.ok(r.status === 404 || (r.status === 200 && r.text === d.content), `during ${d.hash}: ${r.status}`);
            if (r.status === 200) assert.ok(sent.has(r.text));
          }
        }
        // The owner lists (rebuilt on restore) agree with the pastes.
        const web = new WebClient(b);
        await login(web, 'alice');
        web.cookies.clear();
        for (const part of sessionCookie.split('; '))
          web.cookies.set(part.split('=')[0] as string, part.slice(part.indexOf('=') + 1));
        assert.equal((await web.get('/my')).status, 200, 'a session from before the backup still works');
        const c0 = new WebClient(b);
        await cli(dir, ['user', 'passwd', 'c0'], 'password123');
        await login(c0, 'c0');
        // Every page of the list: how many pastes c0 created during the backup (and so how
        // far down its first ones went) depends on how long the backup took.
        let listed = '';
        for (let page = 1; page <= 50; page++) {
          const text = (await c0.get(`/my?page=${page}`)).text;
          if (text.includes('Nothing on this page.')) break;
          listed += text;
        }
        for (const hash of (clients[0] as Client).stable.keys())
          assert.ok(listed.includes(`/p/${hash}`), `c0's list shows ${hash}`);
        // Nothing torn: every paste file parses, as the export (which reads them all) shows.
        const out: string[] = [];
        const warnings: string[] = [];
        await runCli(['export'], {
          env: { DATA_DIR: dir },
          stdout: (l) => out.push(l),
          stderr: (l) => warnings.push(l),
          readStdin: async () => '',
        });
        assert.deepEqual(warnings, []);
        assert.ok(out.length >= CLIENTS * STABLE);
      } finally {
        await b.stop();
      }
    } finally {
      await cleanup(dir);
    }
  });

  test('restore refuses a folder with data unless --force, and a damaged archive changes nothing', async () => {
    const dir = await tempDataDir();
    try {
      await writeFile(join(dir, 'keep.txt'), 'mine');
      await assert.rejects(
        restore(archive, dir),
        /is not empty \(keep\.txt\); restore into an empty folder, or add --force/,
      );
      assert.equal(await readFile(join(dir, 'keep.txt'), 'utf8'), 'mine');
      // A damaged copy: cut short.
      const bytes = await readFile(archive);
      const cut = join(work, 'cut.tar.gz');
      await writeFile(cut, bytes.subarray(0, Math.floor(bytes.length / 2)));
      await assert.rejects(restore(cut, dir, true), /cut\.tar\.gz: .*; nothing was changed/);
      assert.deepEqual(await readdir(dir), ['keep.txt']);
      await assert.rejects(restore(join(work, 'nope.tar.gz'), dir, true), /nope\.tar\.gz does not exist/);
      assert.match(await restore(archive, dir, true), /^restored/);
      const names = (await readdir(dir)).sort();
      assert.ok(
        !names.includes('keep.txt') &&
          names.includes('accounts.json') &&
          names.includes('owners') &&
          names.includes('expiry'),
      );
      // The expiry index is rebuilt from the pastes: the sweep will find the expiring one.
      const entries = (await readdir(join(dir, 'expiry'), { recursive: true })).map(String);
      assert.ok(
        entries.some((e) => e.endsWith(`-${expiringHash}`)),
        entries.join(','),
      );
      const token = (clients[1] as Client).token;
      const b = await startServer({ dataDir: dir });
      try {
        assert.equal(
          (await req(b, 'GET', `/api/v1/raw.php?hash=${[...(clients[1] as Client).stable.keys()][0]}`, { token }))
            .status,
          200,
        );
      } finally {
        await b.stop();
      }
    } finally {
      await cleanup(dir);
    }
  });

  test('--with-logs adds the API and audit logs; each backup and restore is audited', async () => {
    const file = join(work, 'with-logs.tar.gz');
    const r = await cliProcess(a.dataDir, ['backup', file, '--with-logs']);
    assert.equal(r.code, 0, r.err);
    const listed = execFileSync('tar', ['-tzf', file], { encoding: 'utf8' });
    assert.match(listed, /^logs\/api-\d{4}-\d\d-\d\d\.jsonl$/m);
    assert.match(listed, /^logs\/audit-\d{4}-\d\d-\d\d\.jsonl$/m);
    const day = new Date().toISOString().slice(0, 10);
    const audit = (await readFile(join(a.dataDir, 'logs', `audit-${day}.jsonl`), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.deepEqual(
      audit.filter((e) => e['action'] === 'backup').map((e) => e['target']),
      [archive, file],
    );
    const dir = await tempDataDir();
    try {
      await restore(file, dir);
      const restored = await readFile(join(dir, 'logs', `audit-${day}.jsonl`), 'utf8');
      assert.match(restored.trim().split('\n').at(-1) ?? '', /"action":"restore","target":"[^"]*with-logs\.tar\.gz"/);
    } finally {
      await cleanup(dir);
    }
  });

  test('restore --force of an archive without logs keeps the folder’s API and audit logs, and adds the restore to them', async () => {
    const dir = await tempDataDir();
    try {
      await restore(archive, dir);
      const day = new Date().toISOString().slice(0, 10);
      await writeFile(join(dir, 'logs', `api-${day}.jsonl`), '{"endpoint":"/api/v1/paste.php"}\n', { flag: 'a' });
      await cliProcess(dir, ['user', 'add', 'someone']);
      const before = await readFile(join(dir, 'logs', `audit-${day}.jsonl`), 'utf8');
      assert.match(before, /"action":"user.add"/);
      assert.match(await restore(archive, dir, true), /^restored/);
      const after = await readFile(join(dir, 'logs', `audit-${day}.jsonl`), 'utf8');
      assert.ok(after.startsWith(before), 'every earlier line is still there');
      assert.match(after.slice(before.length), /^\{[^\n]*"action":"restore"[^\n]*\}\n$/);
      assert.match(await readFile(join(dir, 'logs', `api-${day}.jsonl`), 'utf8'), /paste\.php/);
    } finally {
      await cleanup(dir);
    }
  });
});

describe('a restore cut short by a crash', () => {
  /**
   * The swap's steps, as restore takes them once the archive checked out: each entry of the
   * folder moved aside, then each staged entry moved in. Stopped after any number of them
   * (a crash), the next start finishes it: the folder holds the restored data whole, kept
   * logs, and none of the old; staging that was never marked ready leaves the old data whole.
   */
  const OLD = {
    'accounts.json': 'old accounts',
    'format.json': 'old format',
    'views.json': 'old only',
    'pastes/ab/abcdef.json': 'old paste',
    'logs/audit.jsonl': 'old audit',
  };
  const NEW = {
    'accounts.json': 'new accounts',
    'format.json': 'new format',
    'pastes/cd/cdefgh.json': 'new paste',
    'owners/1.log': '+cdefghijkl',
  };
  const put = async (root: string, files: Record<string, string>): Promise<void> => {
    for (const [name, text] of Object.entries(files)) {
      const path = join(root, name);
      await mkdir(join(path, '..'), { recursive: true });
      await writeFile(path, text);
    }
  };
  const tree = async (root: string): Promise<Record<string, string>> => {
    const out: Record<string, string> = {};
    for (const e of await readdir(root, { recursive: true, withFileTypes: true })) {
      if (e.isFile())
        out[relative(root, join(e.parentPath, e.name))] = await readFile(join(e.parentPath, e.name), 'utf8');
    }
    return out;
  };

  test('the next start finishes it, after any step of the swap; unmarked staging is dropped', async () => {
    const tops = (files: Record<string, string>): string[] => [
      ...new Set(Object.keys(files).map((n) => n.split('/')[0] as string)),
    ];
    const steps: [string, string][] = [
      ...tops(OLD)
        .filter((n) => n !== 'logs')
        .map((n): [string, string] => [n, join('.restore-old', n)]),
      ...tops(NEW).map((n): [string, string] => [join('.restore', n), n]),
    ];
    for (let done = 0; done <= steps.length; done++) {
      const dir = await tempDataDir();
      try {
        await put(dir, OLD);
        await put(join(dir, '.restore'), NEW);
        await writeFile(join(dir, '.restore', '.ready'), JSON.stringify({ names: tops(NEW), keepLogs: true }));
        await mkdir(join(dir, '.restore-old'));
        for (const [from, to] of steps.slice(0, done)) await rename(join(dir, from), join(dir, to));
        assert.equal(await finishRestore(dir), true);
        assert.deepEqual(await tree(dir), { ...NEW, 'logs/audit.jsonl': 'old audit' }, `after ${done} steps`);
      } finally {
        await cleanup(dir);
      }
    }
    // Cut short while the archive was still being checked: the old data stays, staging goes.
    const dir = await tempDataDir();
    try {
      await put(dir, OLD);
      await put(join(dir, '.restore'), { 'accounts.json': 'half' });
      assert.equal(await finishRestore(dir), false);
      assert.deepEqual(await tree(dir), OLD);
    } finally {
      await cleanup(dir);
    }
  });

  test('a restore under way holds the folder: CLI commands leave its staging alone, a server will not start', async () => {
    const dir = await tempDataDir();
    try {
      await put(join(dir, '.restore'), { 'pastes/cd/cdefgh.json': 'being unpacked' });
      // This test process stands for the restore: alive, on this host.
      await writeFile(join(dir, 'server.pid'), `${process.pid} ${hostname()} restore\n`);
      const listed = await cliProcess(dir, ['user', 'list']);
      assert.equal(listed.code, 0, listed.err);
      assert.deepEqual(await readdir(join(dir, '.restore')), ['pastes'], 'the staging is left to the restore');
      const server = spawnSync(process.execPath, ['--import', 'tsx', join(ROOT, 'src/main.ts')], {
        cwd: ROOT,
        env: { ...process.env, DATA_DIR: dir, PORT: '0' },
        encoding: 'utf8',
      });
      assert.equal(server.status, 1);
      assert.match(
        server.stdout + server.stderr,
        new RegExp(`the restore with pid ${process.pid} on \\S+ is using this data folder`),
      );
      await writeFile(join(dir, '..', `${dir.split('/').at(-1)}.tar.gz`), 'not even an archive');
      const again = await cliProcess(dir, ['restore', join(dir, '..', `${dir.split('/').at(-1)}.tar.gz`), '--force']);
      await rm(join(dir, '..', `${dir.split('/').at(-1)}.tar.gz`));
      assert.match(
        again.err,
        new RegExp(
          `^error: the restore with pid ${process.pid} on \\S+ is using .*; stop it before restoring \\(nothing was changed\\)`,
        ),
      );
      // Once the restore is gone (its claim removed, or its pid dead), unmarked staging is dropped.
      await rm(join(dir, 'server.pid'));
      assert.equal((await cliProcess(dir, ['user', 'list'])).code, 0);
      assert.deepEqual(
        (await readdir(dir)).filter((n) => n.startsWith('.restore')),
        [],
      );
    } finally {
      await cleanup(dir);
    }
  });

  test('a server started on a folder whose restore was cut short finishes it and serves the restored data', async () => {
    const first = await startServer();
    const token = await makeToken(first.dataDir);
    const hash = String(
      (await req(first, 'POST', '/api/v1/paste_create.php', { token, body: { content: 'in the backup' } })).json[
        'hash'
      ],
    );
    // In backups/, the one place in DATA_DIR a backup may be written.
    await mkdir(join(first.dataDir, 'backups'));
    const archive = join(first.dataDir, 'backups', 'cut.tar.gz');
    await cli(first.dataDir, ['backup', archive]);
    await first.stop();
    const dir = await tempDataDir();
    try {
      // Another folder, restored into until the archive checked out and all but the pastes were swapped in.
      await put(dir, { 'accounts.json': '{"users":[]}', 'pastes/zz/zzzzzz.json': 'old' });
      await restore(archive, dir, true);
      const names = (await readdir(dir)).filter((n) => n !== 'logs');
      await rename(join(dir, 'pastes'), join(dir, 'moved-pastes'));
      await mkdir(join(dir, '.restore'));
      await rename(join(dir, 'moved-pastes'), join(dir, '.restore', 'pastes'));
      await writeFile(join(dir, '.restore', '.ready'), JSON.stringify({ names, keepLogs: true }));
      const server = await startServer({ dataDir: dir });
      try {
        assert.equal((await req(server, 'GET', `/api/v1/raw.php?hash=${hash}`, { token })).text, 'in the backup');
        assert.deepEqual(
          (await readdir(dir)).filter((n) => n.startsWith('.restore')),
          [],
        );
      } finally {
        await server.stop();
      }
    } finally {
      await cleanup(dir);
      await cleanup(first.dataDir);
    }
  });
});

describe('backup from the CLI', () => {
  test('backup into a folder that does not exist names the folder', async () => {
    const dir = await tempDataDir();
    try {
      const r = await cliProcess(dir, ['backup', join(dir, 'no-such-folder', 'b.tar.gz')]);
      assert.equal(r.code, 1);
      assert.equal(r.err, `error: ${join(dir, 'no-such-folder')} does not exist: create the folder first\n`);
    } finally {
      await cleanup(dir);
    }
  });
});
