import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { backendEnv } from '../helpers/backend.ts';
import { cleanup, events, ROOT, spawnServer, tempDataDir } from '../helpers/server.ts';

/** Runs `src/main.ts` or `src/cli.ts` to its end; answers its exit code and what it printed. */
function run(
  script: 'main' | 'cli',
  env: Record<string, string>,
  args: string[] = [],
  uid?: number,
): Promise<{ code: number | null; out: string }> {
  // The backend of the suite (test/helpers/backend.ts): this data folder's database, if any.
  const backend = env['DATA_DIR'] === undefined ? Promise.resolve({}) : backendEnv(env['DATA_DIR']);
  return backend.then((b) => run1(script, { ...b, ...env }, args, uid));
}

function run1(
  script: 'main' | 'cli',
  env: Record<string, string>,
  args: string[],
  uid?: number,
): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const proc = spawn(process.execPath, ['--import', 'tsx', join(ROOT, `src/${script}.ts`), ...args], {
      cwd: ROOT,
      env: { ...process.env, PORT: '0', HOST: '127.0.0.1', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(uid === undefined ? {} : { uid, gid: uid }),
    });
    let out = '';
    proc.stdout.on('data', (d: Buffer) => (out += d.toString()));
    proc.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const timer = setTimeout(() => proc.kill('SIGKILL'), 20_000);
    proc.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
  });
}

/** The one line the CLI printed: no stack, no error object. */
function oneLine(out: string, pattern: RegExp): void {
  const lines = out.trim().split('\n');
  assert.equal(lines.length, 1, out);
  assert.match(lines[0] ?? '', pattern);
}

/** The one event the server logged: an error whose message matches. */
function oneEvent(out: string, pattern: RegExp): void {
  const all = events(out);
  assert.equal(all.length, 1, out);
  assert.equal(all[0]?.level, 'error');
  assert.match(all[0]?.message ?? '', pattern);
  assert.equal(all[0]?.['stack'], undefined, 'no stack');
}

describe('start-up and CLI errors name the file or folder, in one line', () => {
  test('a bad configuration: the CLI names every bad variable on one line and exits 2, as the server does', async () => {
    const env = { DATA_DIR: '/nonexistent-never-made', PORT: 'abc', AUTH_FAIL_LIMIT_PER_MINUTE: 'x' };
    const server = await run('main', env);
    assert.equal(server.code, 2);
    const cli = await run('cli', env, ['user', 'list']);
    assert.equal(cli.code, 2);
    oneLine(
      cli.out,
      /^error: invalid configuration: PORT must be an integer from 0 to 65535, got "abc"; AUTH_FAIL_LIMIT_PER_MINUTE must be an integer/,
    );
  });

  test('a port already taken', async () => {
    const dir = await tempDataDir();
    const other = await tempDataDir();
    const first = await spawnServer({ dataDir: dir });
    try {
      // Its own data folder: the same one would be refused first, as in use. Made ready by the
      // CLI first, so that the refusal is all the server says (a new database logs its migration).
      assert.equal((await run('cli', { DATA_DIR: other }, ['user', 'list'])).code, 0);
      const second = await run('main', { DATA_DIR: other, PORT: String(first.port) });
      assert.equal(second.code, 1);
      oneEvent(
        second.out,
        new RegExp(
          `^cannot start: port ${first.port} on 127\\.0\\.0\\.1 is already in use by another program \\(EADDRINUSE\\)$`,
        ),
      );
    } finally {
      await first.stop();
      await cleanup(dir);
      await cleanup(other);
    }
  });
});
