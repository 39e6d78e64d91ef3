// Rebuilds vendor/postgres-3.4.9-pastebin.1.tgz (vendor/README.md): the driver as published on
// npm, checked against its known integrity, with vendor/postgres-3.4.9-pastebin.1.patch applied.
// Run by hand, never at install. `--check` rebuilds aside and compares it, file by file, with the
// committed tarball, so a reviewer sees the tarball holds upstream plus the patch and nothing else.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const UPSTREAM = 'postgres@3.4.9';
const UPSTREAM_INTEGRITY =
  'sha512-GD3qdB0x1z9xgFI6cdRD6xu2Sp2WCOEoe3mtnyB5Ee0XrrL5Pe+e4CCnJrRMnL1zYtRDZmQQVbvOttLnKDLnaw==';
const NAME = 'postgres-3.4.9-pastebin.1';
const vendor = join(dirname(fileURLToPath(import.meta.url)), '..', 'vendor');
const checkOnly = process.argv.includes('--check');

const run = (cmd, args, cwd) =>
  execFileSync(cmd, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
const integrity = (file) => `sha512-${createHash('sha512').update(readFileSync(file)).digest('base64')}`;
const fail = (message) => {
  console.error(`scripts/vendor-postgres.mjs: ${message}`);
  process.exitCode = 1;
};

/** Every file under `dir`, by its path relative to `dir`, with its bytes. */
function tree(dir) {
  const files = new Map();
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath ?? entry.path, entry.name);
    files.set(relative(dir, path), readFileSync(path));
  }
  return files;
}

/** Unpacks a tarball into a new folder under `work`; resolves with its `package/` folder. */
function unpack(tarball, work, name) {
  const into = join(work, name);
  mkdirSync(into);
  run('tar', ['xzf', tarball, '-C', into]);
  return join(into, 'package');
}

const work = mkdtempSync(join(tmpdir(), 'vendor-postgres-'));
try {
  const [upstream] = JSON.parse(run('npm', ['pack', UPSTREAM, '--json', '--pack-destination', work], work));
  const upstreamTarball = join(work, upstream.filename);
  if (integrity(upstreamTarball) !== UPSTREAM_INTEGRITY) throw new Error(`${UPSTREAM} is not the release reviewed`);
  const pkg = unpack(upstreamTarball, work, 'upstream');
  // A repository of its own, so `git apply` reads paths from the package's folder and nothing else.
  run('git', ['init', '-q'], pkg);
  run('git', ['apply', join(vendor, `${NAME}.patch`)], pkg);
  rmSync(join(pkg, '.git'), { recursive: true });
  const [built] = JSON.parse(run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', work], pkg));
  const builtTarball = join(work, built.filename);
  if (built.filename !== `${NAME}.tgz`) throw new Error(`built ${built.filename}, not ${NAME}.tgz`);

  if (checkOnly) {
    const want = tree(unpack(builtTarball, work, 'built'));
    const have = tree(unpack(join(vendor, `${NAME}.tgz`), work, 'committed'));
    for (const path of new Set([...want.keys(), ...have.keys()])) {
      const [a, b] = [want.get(path), have.get(path)];
      if (a === undefined || b === undefined || !a.equals(b))
        fail(`vendor/${NAME}.tgz differs from ${UPSTREAM} with the patch at ${path}`);
    }
    if (!process.exitCode) console.log(`vendor/${NAME}.tgz holds ${UPSTREAM} with the patch, file for file`);
  } else {
    copyFileSync(builtTarball, join(vendor, `${NAME}.tgz`));
    console.log(`vendor/${NAME}.tgz ${integrity(builtTarball)}\nnow run npm install, so package-lock.json records it`);
  }
} catch (err) {
  fail(err instanceof Error ? err.message : String(err));
} finally {
  rmSync(work, { recursive: true, force: true });
}
