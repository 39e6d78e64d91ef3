import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { CliError, parseOptions } from '../src/cli.ts';
import { BACKEND, backendEnv } from './helpers/backend.ts';
import { psql, testCluster } from './helpers/postgres.ts';
import { cleanup, cli, req, ROOT, startServer, tempDataDir, type TestServer } from './helpers/server.ts';
import { auditEntries, everythingStored, storedAccounts } from './helpers/stored.ts';

/** The CLI as an operator runs it, on the suite's backend: its own process, exit status and stderr. */
async function run(
  dataDir: string,
  args: string[],
  input = '',
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const r = spawnSync(process.execPath, ['--import', 'tsx', join(ROOT, 'src/cli.ts'), ...args], {
    cwd: ROOT,
    env: { ...process.env, DATA_DIR: dataDir, ...(await backendEnv(dataDir)) },
    input,
    encoding: 'utf8',
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('cli as a process', () => {
  let dir: string;
  before(async () => {
    dir = await tempDataDir();
  });
  after(() => cleanup(dir));

  test('user add prints the id; token create prints the secret alone on one line', async () => {
    const u = await run(dir, ['user', 'add', 'carol']);
    assert.equal(u.status, 0, u.stderr);
    assert.equal(u.stdout, '1\n');
    const t = await run(dir, [
      'token',
      'create',
      '--user',
      'carol',
      '--scopes',
      'read,write',
      '--rate',
      '5',
      '--label',
      'laptop',
    ]);
    assert.equal(t.status, 0, t.stderr);
    assert.match(t.stdout, /^pst_[A-Za-z0-9]{8}_[A-Za-z0-9]{32}\n$/);
  });

  test('errors exit non-zero with one line on stderr', async () => {
    for (const args of [
      ['token', 'create', '--user', 'nobody', '--scopes', 'read'],
      ['token', 'create', '--user', 'carol', '--scopes', 'read,fly'],
      ['token', 'create', '--user', 'carol', '--scopes', 'read', '--rate', 'ten'],
      ['token', 'create', '--user', 'carol', '--scopes', 'admin'],
      ['token', 'create', '--user', 'carol', '--scopes'],
      ['token', 'create', '--user', 'carol', '--scopes', 'read', '--colour', 'red'],
      ['user', 'add', 'carol'],
      ['user', 'add', 'bad name'],
      ['user', 'add', '-x'],
      ['user', 'add', 'x', '-admin'],
      ['token', 'create', '--user', 'carol', '--scopes', 'read', '--label', 'two\nlines'],
      ['token', 'create', '--user', 'carol', '--scopes', 'read', '--rate', '-5'],
      ['token', 'create', '--user', 'carol', '--scopes', 'read', '--constructor', 'x'],
      ['token', 'revoke', 'nope'],
      ['frobnicate'],
    ]) {
      const r = await run(dir, args);
      assert.notEqual(r.status, 0, args.join(' '));
      assert.equal(r.stdout, '');
      assert.match(r.stderr, /^error: [^\n]+\n$/, args.join(' '));
    }
  });

  test('no command, help or --help prints the commands, with no configuration needed; an unknown one points there', async () => {
    for (const args of [[], ['help'], ['--help'], ['-h']]) {
      const r = spawnSync(process.execPath, ['--import', 'tsx', join(ROOT, 'src/cli.ts'), ...args], {
        cwd: ROOT,
        env: { ...process.env, PORT: 'not a port' },
        encoding: 'utf8',
      });
      assert.equal(r.status, 0, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stdout, /^usage:\n {2}user add NAME/);
      assert.match(r.stdout, /restore FILE \[--force\]\n$/);
    }
    assert.match(
      (await run(dir, ['frobnicate'])).stderr,
      /^error: unknown command "frobnicate"; --help lists the commands\n$/,
    );
  });

  test('from a terminal, --password-stdin reads one line after a prompt, without echoing it', {
    timeout: 60_000,
  }, async () => {
    // `script` gives the CLI a terminal, as `docker exec -it` does; the line ends with Enter, not Ctrl-D.
    const cmd = [
      process.execPath,
      '--import',
      'tsx',
      join(ROOT, 'src/cli.ts'),
      'user',
      'add',
      'tty-user',
      '--password-stdin',
    ]
      .map((a) => `'${a}'`)
      .join(' ');
    const env = { ...process.env, DATA_DIR: dir, ...(await backendEnv(dir)) };
    const p = spawn('script', ['-qec', cmd, '/dev/null'], { cwd: ROOT, env });
    let out = '';
    const prompted = new Promise<void>((resolve) =>
      p.stdout.on('data', (d: Buffer) => ((out += d.toString()), out.includes('password: ') && resolve())),
    );
    const exited = new Promise<number | null>((resolve) => p.on('exit', resolve));
    await prompted;
    p.stdin.write('a secret typed in\r');
    assert.equal(await exited, 0, out);
    p.stdin.end();
    assert.doesNotMatch(out, /a secret typed in/, 'not echoed');
    assert.match(out, /^\d+\r?$/m, "the new user's id");
    const accounts = await storedAccounts(dir);
    assert.match(accounts.users.find((u) => u.name === 'tty-user')?.password ?? '', /^scrypt\$/);

    // Ctrl-C or Ctrl-D at the prompt: nothing is done, and the exit status says so.
    for (const [key, name] of [
      ['\u0003', 'tty-c'],
      ['\u0004', 'tty-d'],
    ]) {
      const line = [
        process.execPath,
        '--import',
        'tsx',
        join(ROOT, 'src/cli.ts'),
        'user',
        'add',
        name as string,
        '--password-stdin',
      ]
        .map((a) => `'${a}'`)
        .join(' ');
      const q = spawn('script', ['-qec', line, '/dev/null'], { cwd: ROOT, env });
      let said = '';
      const asked = new Promise<void>((resolve) =>
        q.stdout.on('data', (d: Buffer) => ((said += d.toString()), said.includes('password: ') && resolve())),
      );
      const ended = new Promise<number | null>((resolve) => q.on('exit', resolve));
      await asked;
      q.stdin.write(key as string);
      assert.equal(await ended, 1, said);
      q.stdin.end();
      assert.match(said, /error: no password given/);
      const now = await storedAccounts(dir);
      assert.equal(
        now.users.some((u) => u.name === name),
        false,
      );
    }
  });

  test('user add --password-stdin stores a scrypt hash, never the password', async () => {
    const r = await run(dir, ['user', 'add', 'dave', '--admin', '--password-stdin'], 'a long password\n');
    assert.equal(r.status, 0, r.stderr);
    assert.doesNotMatch(await everythingStored(dir), /a long password/);
    assert.match((await storedAccounts(dir)).users.find((u) => u.name === 'dave')?.password ?? '', /^scrypt\$/);
    assert.equal((await run(dir, ['token', 'create', '--user', 'dave', '--scopes', 'read,admin'])).status, 0);
  });

  test('user add without --password-stdin says on stderr that the user has no password; stdout is the id alone', async () => {
    const piped = await run(dir, ['user', 'add', 'erin'], 'a long password\n');
    assert.equal(piped.status, 0, piped.stderr);
    assert.match(piped.stdout, /^\d+\n$/);
    assert.match(
      piped.stderr,
      /^note: erin has no password: they cannot sign in on the web until one is set \(--password-stdin, or user passwd erin\)\n$/,
    );
    assert.equal((await storedAccounts(dir)).users.find((u) => u.name === 'erin')?.password ?? null, null);
    const given = await run(dir, ['user', 'add', 'frank', '--password-stdin'], 'a long password\n');
    assert.equal(given.status, 0, given.stderr);
    assert.equal(given.stderr, '', 'nothing to say when the password was read');
  });
});

describe('cli against a running server', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
  });
  after(async () => {
    await server.stop();
    await cleanup(server.dataDir);
  });

  test('a token created by the CLI authenticates on the next request, and list shows its use', async () => {
    await cli(server.dataDir, ['user', 'add', 'erin']);
    const secret = await cli(server.dataDir, [
      'token',
      'create',
      '--user',
      'erin',
      '--scopes',
      'read',
      '--label',
      'ci bot',
    ]);
    const r = await req(server, 'GET', '/api/v1/paste.php?hash=AAAAAAAAAA', { token: secret });
    assert.equal(r.status, 404);
    const list = (await cli(server.dataDir, ['token', 'list'])).split('\n');
    assert.equal(list.length, 1);
    const row = list.find((l) => l.startsWith(secret.split('_')[1] as string));
    assert.ok(row, 'token row listed by id first');
    assert.match(row, /erin\s+ci bot\s+read\s+0\s+\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\s+(never|\d{4}-)/);
    assert.doesNotMatch(list.join('\n'), new RegExp(secret));
  });

  test('token list is empty when there are no tokens, and revoke removes a line', async () => {
    const dir = await tempDataDir();
    try {
      assert.equal(await cli(dir, ['token', 'list']), '');
      await cli(dir, ['user', 'add', 'fay']);
      const a = await cli(dir, ['token', 'create', '--user', 'fay', '--scopes', 'read']);
      const b = await cli(dir, ['token', 'create', '--user', 'fay', '--scopes', 'write', '--rate', '9']);
      const ids = (await cli(dir, ['token', 'list'])).split('\n').map((l) => l.split(/\s+/)[0]);
      assert.deepEqual(ids, [a.split('_')[1], b.split('_')[1]]);
      await cli(dir, ['token', 'revoke', a.split('_')[1] as string]);
      assert.match(await cli(dir, ['token', 'list']), new RegExp(`^${b.split('_')[1]}\\s+fay\\s+-\\s+write\\s+9\\s`));
    } finally {
      await cleanup(dir);
    }
  });

  test('a token the CLI creates is stored without its secret in clear', async () => {
    const secret = await cli(server.dataDir, ['token', 'create', '--user', 'erin', '--scopes', 'read']);
    assert.doesNotMatch(JSON.stringify(await storedAccounts(server.dataDir)), new RegExp(secret));
    assert.doesNotMatch(await everythingStored(server.dataDir), new RegExp(secret));
  });
});

describe('cli user management', () => {
  let dir: string;
  before(async () => {
    dir = await tempDataDir();
  });
  after(() => cleanup(dir));

  test('user list shows one user a line; disable, enable and admin change it; each is audited', async () => {
    assert.equal((await run(dir, ['user', 'add', 'root', '--admin'])).status, 0);
    assert.equal((await run(dir, ['user', 'add', 'gus'])).status, 0);
    assert.equal((await run(dir, ['token', 'create', '--user', 'gus', '--scopes', 'read'])).status, 0);
    const list = await run(dir, ['user', 'list']);
    assert.equal(list.status, 0, list.stderr);
    const lines = list.stdout.trimEnd().split('\n');
    assert.equal(lines.length, 2);
    assert.match(
      lines[0] ?? '',
      /^1\s+root\s+admin\s+enabled\s+\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\s+never\s+0 tokens\s+0 pastes$/,
    );
    assert.match(lines[1] ?? '', /^2\s+gus\s+user\s+enabled\s+.*\s+1 token\s+0 pastes$/);
    assert.equal((await run(dir, ['user', 'disable', 'gus'])).status, 0);
    assert.match((await run(dir, ['user', 'list'])).stdout, /gus\s+user\s+disabled/);
    assert.equal((await run(dir, ['user', 'enable', 'gus'])).status, 0);
    assert.equal((await run(dir, ['user', 'admin', 'gus'])).status, 0);
    assert.match((await run(dir, ['user', 'list'])).stdout, /gus\s+admin\s+enabled/);
    assert.equal((await run(dir, ['user', 'admin', 'gus', '--remove'])).status, 0);
    assert.match((await run(dir, ['user', 'list'])).stdout, /gus\s+user\s+enabled/);
    for (const args of [
      ['user', 'disable', 'root'],
      ['user', 'admin', 'root', '--remove'],
      ['user', 'disable', 'nobody'],
      ['user', 'enable'],
      ['user', 'admin', 'gus', '--off'],
    ]) {
      const r = await run(dir, args);
      assert.notEqual(r.status, 0, args.join(' '));
      assert.match(r.stderr, /^error: [^\n]+\n$/, args.join(' '));
    }
    assert.match((await run(dir, ['user', 'disable', 'root'])).stderr, /only enabled admin/);
    const audit = await auditEntries(dir);
    assert.deepEqual(
      audit.map((e) => `${e['action']} ${e['target']}`),
      [
        'user.add user:root',
        'user.add user:gus',
        `token.create ${audit[2]?.['target']}`,
        'user.disable user:gus',
        'user.enable user:gus',
        'user.admin user:gus',
        'user.unadmin user:gus',
      ],
    );
    assert.ok(audit.every((e) => e['via'] === 'cli' && e['ip'] === null && e['user_id'] === null));
  });
});

describe('cli help and parsing, from one table', () => {
  let dir: string;
  before(async () => {
    dir = await tempDataDir();
  });
  after(() => cleanup(dir));

  /** Each line of --help as the command's words and the flags it shows, with whether each takes a value. */
  async function helpLines(): Promise<{ words: string[]; flags: [string, boolean][] }[]> {
    const lines = (await cli(dir, ['--help'])).split('\n').slice(1);
    return lines.map((line) => {
      const words = (/^ {2}([a-z]+(?: [a-z]+)*)/.exec(line)?.[1] ?? '').split(' ');
      const flags = [...line.matchAll(/--([a-z-]+)( [^\s\]]+)?/g)].map((m): [string, boolean] => [
        m[1] as string,
        m[2] !== undefined,
      ]);
      return { words, flags };
    });
  }

  /** What the CLI refused a command line with (it must refuse it). */
  async function refusal(args: string[]): Promise<string> {
    try {
      await cli(dir, args);
    } catch (err) {
      assert.ok(err instanceof CliError, `${args.join(' ')}: ${String(err)}`);
      return err.message;
    }
    assert.fail(`${args.join(' ')} was accepted`);
  }

  const onPostgresRefused = (words: string[]): boolean =>
    BACKEND === 'postgres' && (words[0] === 'backup' || words[0] === 'restore');

  test('--help gives each command of CONTRACT §2 and the rest a line of its own', async () => {
    const named = (await helpLines()).map((l) => l.words.join(' '));
    for (const c of ['user add', 'user passwd', 'user list', 'user disable', 'user enable', 'user admin'])
      assert.ok(named.includes(c), c);
    for (const c of ['token create', 'token list', 'token revoke', 'export', 'import', 'backup', 'restore'])
      assert.ok(named.includes(c), c);
    assert.equal(new Set(named).size, named.length, 'no command twice');
  });

  test('every command refuses a flag its --help line does not show', async () => {
    for (const { words } of await helpLines()) {
      const message = await refusal([...words, '--no-such-flag']);
      if (onPostgresRefused(words)) assert.match(message, /pg_dump/);
      else assert.equal(message, 'unknown option --no-such-flag', words.join(' '));
    }
  });

  test('a command line refused is refused before the storage is opened: no data folder made, no schema in the database', async () => {
    const fresh = join(dir, 'not-yet');
    /** Whether the CLI opened (and so made) its storage: the data folder, or the database's tables. */
    const opened = async (): Promise<boolean> => {
      if (BACKEND === 'files')
        return stat(fresh).then(
          () => true,
          () => false,
        );
      const database = new URL((await backendEnv(fresh))['DATABASE_URL'] as string).pathname.slice(1);
      const tables = psql(await testCluster(), "select count(*) from pg_tables where schemaname = 'public'", database);
      return tables.trim() !== '0';
    };
    for (const args of [
      ['frobnicate'],
      ['user', 'list', 'extra'],
      ['token', 'create', '--colour', 'red'],
      ['user', 'add'],
    ]) {
      await assert.rejects(cli(fresh, args), CliError, args.join(' '));
      assert.equal(await opened(), false, args.join(' '));
    }
    await cli(fresh, ['user', 'list']);
    assert.equal(await opened(), true, 'a command that runs opens (and makes) it');
  });

  test('every flag a --help line shows is one its command takes, with a value where it shows one', async () => {
    for (const { words, flags } of await helpLines())
      for (const [flag, takesValue] of flags) {
        const args = [...words, `--${flag}`, ...(takesValue ? ['x'] : [])];
        // Each of these lines lacks something else (a NAME, --scopes, a user named x), never its flags.
        const message = await refusal(args);
        assert.doesNotMatch(message, /unknown option|needs a value|takes no value/, args.join(' '));
        if (onPostgresRefused(words)) assert.match(message, /pg_dump/);
      }
  });
});

describe('parseOptions', () => {
  test('reads --name value and --name=value, and refuses repeats and bare values', () => {
    const { positional, opts } = parseOptions(['x', '--rate=5', '--label', 'a b'], { rate: 'value', label: 'value' });
    assert.deepEqual(positional, ['x']);
    assert.equal(opts.get('rate'), '5');
    assert.equal(opts.get('label'), 'a b');
    assert.throws(() => parseOptions(['--rate', '1', '--rate', '2'], { rate: 'value' }), CliError);
    assert.throws(() => parseOptions(['--admin=1'], { admin: 'bool' }), CliError);
    assert.throws(() => parseOptions(['--rate', '--label'], { rate: 'value', label: 'value' }), CliError);
  });

  test('a name every object inherits is no flag: --constructor, --toString and --__proto__ are unknown', () => {
    for (const name of ['constructor', 'toString', '__proto__', 'hasOwnProperty'])
      assert.throws(() => parseOptions([`--${name}`, 'x'], { rate: 'value' }), { message: `unknown option --${name}` });
  });
});
