import assert from 'node:assert/strict';
import { chmod, mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { cleanup } from './helpers/server.ts';
import { findTool, missing } from './helpers/tools.ts';

/**
 * The test command on a machine without the programs some tests run (test/helpers/tools.ts):
 * each is found where Debian or its variable puts it, a test that needs a missing one is
 * skipped naming the package (listed last), and REQUIRE_TOOLS=1 fails it instead.
 */
let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'paste-tools-'));
});
after(() => cleanup(dir));

async function program(path: string, mode = 0o755): Promise<string> {
  await writeFile(path, '#!/bin/sh\nexit 0\n');
  await chmod(path, mode);
  return path;
}

describe('finding the programs', () => {
  test('the browser by CHROMIUM_PATH or any of its usual names on PATH; a file that cannot run is no browser', async () => {
    const bin = join(dir, 'bin');
    const other = join(dir, 'other');
    await mkdir(bin);
    await mkdir(other);
    const browser = await program(join(bin, 'chromium-browser'));
    await program(join(other, 'chromium'), 0o644);
    assert.equal(findTool('chromium', { PATH: `${other}:${bin}` }), browser);
    assert.equal(findTool('chromium', { PATH: other }), null);
    assert.equal(findTool('chromium', { PATH: other, CHROMIUM_PATH: browser }), browser);
    // A variable that names something else is not searched past: it is what the user chose.
    assert.equal(findTool('chromium', { PATH: bin, CHROMIUM_PATH: '/dev/null' }), null);
  });

  test('PostgreSQL is the folder PG_BIN names when it holds every program the helpers run', async () => {
    const pg = join(dir, 'pg');
    await mkdir(pg);
    for (const name of ['initdb', 'postgres', 'pg_ctl']) await program(join(pg, name));
    assert.equal(findTool('postgresql', { PG_BIN: pg }), null, 'no psql yet');
    await program(join(pg, 'psql'));
    assert.equal(findTool('postgresql', { PG_BIN: pg }), pg);
  });

  test('a missing program is named with the Debian package that installs it', () => {
    assert.equal(missing('chromium'), 'needs chromium (apt-get install chromium)');
    assert.equal(missing('promtool'), 'needs promtool (apt-get install prometheus)');
  });
});
