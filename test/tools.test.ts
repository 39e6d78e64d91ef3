import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmod, mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { cleanup, ROOT } from './helpers/server.ts';
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

describe('a run on a machine without them', () => {
  const TOOLS = new URL('./helpers/tools.ts', import.meta.url).href;
  /** `npm test`'s outer command and reporters over one test file, with only an empty folder on PATH. */
  async function run(requireTools: boolean): Promise<{ status: number | null; out: string }> {
    const file = join(dir, 'needs.test.ts');
    await writeFile(
      file,
      `import { test } from 'node:test';
import { needs, skipWithout, tool } from ${JSON.stringify(TOOLS)};
test('drives a browser', async (t) => {
  if (skipWithout(t, 'chromium')) return;
});
test('checks a scrape', needs('promtool'), () => {
  tool('promtool');
});
test('needs nothing', () => {});
`,
    );
    const empty = join(dir, 'empty');
    await mkdir(empty, { recursive: true });
    // This file runs under node's test runner (and maybe npm test's list): the inner run has its own.
    const env = { ...process.env };
    for (const name of ['NODE_TEST_CONTEXT', 'TEST_SKIPS_FILE', 'REQUIRE_TOOLS', 'CHROMIUM_PATH']) delete env[name];
    const r = spawnSync(
      process.execPath,
      [
        '--import',
        'tsx',
        'test/helpers/run-tests.ts',
        process.execPath,
        '--import',
        'tsx',
        '--test',
        '--test-reporter=spec',
        '--test-reporter-destination=stdout',
        '--test-reporter=./test/helpers/skips-reporter.mjs',
        '--test-reporter-destination=stdout',
        file,
      ],
      { cwd: ROOT, env: { ...env, PATH: empty, ...(requireTools ? { REQUIRE_TOOLS: '1' } : {}) }, encoding: 'utf8' },
    );
    return { status: r.status, out: r.stdout + r.stderr };
  }

  test('each test that needs a missing program is skipped naming its package, and the last lines list them', async () => {
    const { status, out } = await run(false);
    assert.equal(status, 0, out);
    assert.match(out, /drives a browser .*# needs chromium \(apt-get install chromium\)/);
    assert.match(out, /ℹ pass 1\n/);
    assert.match(out, /ℹ skipped 2\n/);
    const last = out.trimEnd().split('\n').slice(-4);
    assert.equal(last[0], 'skipped 2:');
    assert.ok(last[1]?.endsWith('needs.test.ts: 1 test, needs chromium (apt-get install chromium)'), last[1]);
    assert.ok(last[2]?.endsWith('needs.test.ts: 1 test, needs promtool (apt-get install prometheus)'), last[2]);
    assert.equal(last[3], '  to run them: apt-get install chromium prometheus');
  });

  test('with REQUIRE_TOOLS=1 they fail instead, and the run exits non-zero', async () => {
    const { status, out } = await run(true);
    assert.equal(status, 1, out);
    assert.match(out, /ℹ fail 2\n/);
    assert.match(out, /ℹ skipped 0\n/);
    assert.match(out, /needs chromium \(apt-get install chromium\) \(REQUIRE_TOOLS=1\)/);
    assert.match(out, /needs promtool \(apt-get install prometheus\) \(REQUIRE_TOOLS=1\)/);
  });
});
