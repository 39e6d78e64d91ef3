import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { access } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { BACKEND, backendEnv } from './helpers/backend.ts';
import { cleanup, cli, ROOT, tempDataDir } from './helpers/server.ts';

/**
 * `backup` and `restore` copy the data folder; on PostgreSQL the database has its own tools,
 * which the CLI names instead of writing or replacing anything (README, Running on PostgreSQL).
 */

/** The CLI as an operator runs it, on the suite's backend: its own process, exit status and output. */
async function run(
  dataDir: string,
  args: string[],
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const r = spawnSync(process.execPath, ['--import', 'tsx', join(ROOT, 'src/cli.ts'), ...args], {
    cwd: ROOT,
    env: { ...process.env, DATA_DIR: dataDir, ...(await backendEnv(dataDir)) },
    encoding: 'utf8',
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

const exists = (path: string): Promise<boolean> =>
  access(path).then(
    () => true,
    () => false,
  );

const REFUSAL =
  'error: backup and restore work on the data folder; with DATABASE_URL set, back the database up with pg_dump and restore it with pg_restore\n';

describe('cli backup and restore on each backend', () => {
  let dir: string;
  let elsewhere: string;
  before(async () => {
    dir = await tempDataDir();
    elsewhere = await tempDataDir();
    await cli(dir, ['user', 'add', 'kept']);
  });
  after(async () => {
    await cleanup(dir);
    await cleanup(elsewhere);
  });

  test('backup copies the data folder; on PostgreSQL it names pg_dump in one line and writes nothing', async () => {
    const archive = join(elsewhere, 'b.tar.gz');
    const r = await run(dir, ['backup', archive]);
    if (BACKEND === 'postgres') {
      assert.equal(r.status, 1);
      assert.equal(r.stdout, '');
      assert.equal(r.stderr, REFUSAL);
      assert.equal(await exists(archive), false, 'no archive is written');
    } else {
      assert.equal(r.status, 0, r.stderr);
      assert.equal(await exists(archive), true);
    }
  });

  test('restore fills an empty data folder; on PostgreSQL it names pg_restore in one line and changes nothing', async () => {
    const archive = join(elsewhere, 'r.tar.gz');
    const target = join(elsewhere, 'restored');
    if (BACKEND === 'postgres') {
      const r = await run(dir, ['restore', archive, '--force']);
      assert.equal(r.status, 1);
      assert.equal(r.stdout, '');
      assert.equal(r.stderr, REFUSAL);
      assert.match(await cli(dir, ['user', 'list']), /\bkept\b/, 'the database is as it was');
    } else {
      assert.equal((await run(dir, ['backup', archive])).status, 0);
      const r = await run(target, ['restore', archive]);
      assert.equal(r.status, 0, r.stderr);
      assert.match(await cli(target, ['user', 'list']), /\bkept\b/);
    }
  });
});
