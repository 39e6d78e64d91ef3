import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chmod, mkdtemp, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { PG_BIN } from '../helpers/pg-cluster.ts';

const run = promisify(execFile);
const HELPER = new URL('../helpers/pg-cluster.ts', import.meta.url).pathname;

test('a test cluster whose server stops at start (its port taken first) is started again on another, never waited on for good', async () => {
  // PostgreSQL's binaries, but a server that fails its first start as a taken port makes it fail.
  const bin = await mkdtemp(join(tmpdir(), 'pastebin-fake-pg-'));
  try {
    await chmod(bin, 0o777);
    for (const name of await readdir(PG_BIN))
      if (name !== 'postgres') await symlink(join(PG_BIN, name), join(bin, name));
    await writeFile(
      join(bin, 'postgres'),
      `#!/bin/sh\nif [ ! -e ${bin}/tried ]; then touch ${bin}/tried; echo 'FATAL:  could not bind IPv4 address "127.0.0.1": Address already in use' >&2; exit 1; fi\nexec ${join(PG_BIN, 'postgres')} "$@"\n`,
    );
    await chmod(join(bin, 'postgres'), 0o755);
    const script = `import { psql, startCluster } from ${JSON.stringify(HELPER)};
      const c = await startCluster();
      process.stdout.write(psql(c.cluster, 'select 6 * 7'));
      await c.stop();`;
    const { stdout } = await run(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      env: { ...process.env, PG_BIN: bin },
      timeout: 60_000,
    });
    assert.equal(stdout, '42');
    assert.ok((await readdir(bin)).includes('tried'), 'the first start failed');
  } finally {
    await rm(bin, { recursive: true, force: true });
  }
});
