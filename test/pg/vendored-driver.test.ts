import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { parseConfig } from '../../src/config.ts';
import { DatabaseStartError, openDatabase } from '../../src/pg/connect.ts';
import { DRIVER_VERSION, driverProblem } from '../../src/pg/driver.ts';
import { ROOT } from '../helpers/server.ts';

const TARBALL = `vendor/postgres-${DRIVER_VERSION}.tgz`;
const MARK = `/* patched: postgres ${DRIVER_VERSION}, PATCHES.md */`;
/** The fields of package.json, package-lock.json and the driver's package.json these tests read. */
interface Manifest {
  version?: string;
  dependencies?: Record<string, string>;
  scripts?: Record<string, string>;
  packages?: Record<string, { resolved?: string; integrity?: string; hasInstallScript?: boolean }>;
}
const json = async (path: string): Promise<Manifest> =>
  JSON.parse(await readFile(join(ROOT, path), 'utf8')) as Manifest;

test('a plain install gives the vendored driver: package.json and its lock name the tarball, node_modules holds it', async () => {
  const pkg = await json('package.json');
  assert.equal(pkg.dependencies?.['postgres'], `file:${TARBALL}`);
  const locked = (await json('package-lock.json')).packages?.['node_modules/postgres'];
  const integrity = `sha512-${createHash('sha512')
    .update(await readFile(join(ROOT, TARBALL)))
    .digest('base64')}`;
  assert.deepEqual([locked?.resolved, locked?.integrity], [`file:${TARBALL}`, integrity]);
  assert.equal((await json('node_modules/postgres/package.json')).version, DRIVER_VERSION);
  for (const file of ['src', 'cjs/src', 'cf/src']) {
    const source = await readFile(join(ROOT, 'node_modules/postgres', file, 'connection.js'), 'utf8');
    assert.equal(source.split(MARK).length, 3, `${file}/connection.js carries both fixes`);
  }
  assert.equal(driverProblem(), null, 'the driver the server loads passes its check at start');
});

test('package.json runs nothing at install: no script edits another package', async () => {
  const scripts = (await json('package.json')).scripts ?? {};
  for (const hook of ['preinstall', 'install', 'postinstall', 'prepare'])
    assert.equal(scripts[hook], undefined, `a "${hook}" script`);
  for (const [name, line] of Object.entries(scripts)) assert.doesNotMatch(line, /node_modules/, name);
  assert.equal((await json('package-lock.json')).packages?.['']?.hasInstallScript, undefined);
});

test('openDatabase refuses a driver without the fixes, at once, in one line that says to reinstall with npm ci', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'paste-driver-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  /** A package like the driver's: package.json, src/index.js, and src/connection.js holding `source`. */
  const fake = async (name: string, version: string, source: string): Promise<string> => {
    await mkdir(join(dir, name, 'src'), { recursive: true });
    await writeFile(join(dir, name, 'package.json'), JSON.stringify({ name: 'postgres', version }));
    await writeFile(join(dir, name, 'src/index.js'), 'export default () => {}\n');
    await writeFile(join(dir, name, 'src/connection.js'), source);
    return pathToFileURL(join(dir, name, 'src/index.js')).href;
  };
  const upstream = 'function nextWrite(fn) {\n    const x = socket.write(chunk, fn)\n';
  const cases: [string, string, RegExp][] = [
    [
      'upstream',
      await fake('upstream', '3.4.9', upstream),
      /^cannot start: the PostgreSQL driver installed is postgres 3\.4\.9, not 3\.4\.9-pastebin\.1 with the fixes of vendor\/README\.md; reinstall with npm ci$/,
    ],
    [
      'relabelled',
      await fake('relabelled', DRIVER_VERSION, upstream),
      /^cannot start: the PostgreSQL driver installed \(postgres 3\.4\.9-pastebin\.1\) lacks the fixes of vendor\/README\.md in its connection\.js; reinstall with npm ci$/,
    ],
    [
      'missing',
      pathToFileURL(join(dir, 'missing/src/index.js')).href,
      /^cannot start: the PostgreSQL driver cannot be read \(ENOENT[^\n]*\), not 3\.4\.9-pastebin\.1 .*; reinstall with npm ci$/,
    ],
  ];
  // Nothing listens there: had it tried to connect, it would wait DATABASE_WAIT_SECONDS and say "does not answer".
  const config = parseConfig({ DATABASE_URL: 'postgres://paste@127.0.0.1:9/paste', DATABASE_WAIT_SECONDS: '30' });
  for (const [name, driverEntry, message] of cases) {
    const started = performance.now();
    await assert.rejects(openDatabase(config, { driverEntry }), (err) => {
      assert.ok(err instanceof DatabaseStartError, name);
      assert.match(err.message, message, name);
      return true;
    });
    assert.ok(performance.now() - started < 5_000, `${name}: refused before connecting`);
  }
  // The same fake, with the fixes' markers, passes: the check reads what it says it reads.
  const patched = await fake('patched', DRIVER_VERSION, `${upstream}${MARK}\n${MARK}\n`);
  assert.equal(driverProblem(patched), null);
});
