import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { backendEnv } from '../helpers/backend.ts';
import { cleanup, spawnServer, tempDataDir } from '../helpers/server.ts';
import { oneEvent, oneLine, runScript } from '../helpers/start-errors.ts';

/** Runs `src/main.ts` or `src/cli.ts` to its end; answers its exit code and what it printed. */
function run(
  script: 'main' | 'cli',
  env: Record<string, string>,
  args: string[] = [],
  uid?: number,
): Promise<{ code: number | null; out: string }> {
  // The backend of the suite (test/helpers/backend.ts): this data folder's database, if any.
  const backend = env['DATA_DIR'] === undefined ? Promise.resolve({}) : backendEnv(env['DATA_DIR']);
  return backend.then((b) => runScript(script, { ...b, ...env }, args, uid));
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

  test('FILE_STORE=s3://… without its credentials: the server says which are missing and exits 2', async () => {
    const server = await run('main', { DATA_DIR: '/nonexistent-never-made', FILE_STORE: 's3://bucket/files' });
    assert.equal(server.code, 2);
    assert.match(server.out, /S3_ACCESS_KEY_ID must be set when FILE_STORE is s3:\/\//);
    assert.match(server.out, /S3_SECRET_ACCESS_KEY must be set when FILE_STORE is s3:\/\//);
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
