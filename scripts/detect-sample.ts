// Writes test/fixtures/detect-sample.json, the labelled sample bench/detect.ts measures
// language detection on (bench/README.md, Language detection): pieces of real files, each
// with its language, where it came from and under which licence. The sources are files a
// Debian system and this project's node_modules hold, and the samples shiki@0.14.7 ships
// (`npm pack shiki@0.14.7` and untar it; pass the folder as the first argument), and files of
// public repositories at fixed commits (REPOSITORIES: clone each as <owner>+<name> in a folder
// and pass it as the second argument; `--repositories-only` replaces just those snippets).
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

interface Snippet {
  language: string;
  source: string;
  licence: string;
  code: string;
}

/** Where each language's files are, and their licence (a function: from the package a file is in). */
interface Source {
  language: string;
  roots: string[];
  match: RegExp;
  licence: string | ((file: string) => string);
}

const NODE_MODULES = join(import.meta.dirname, '..', 'node_modules');

/** The licence a file of node_modules is under: its package's `license` field. */
function packageLicence(file: string): string {
  for (let dir = dirname(file); dir.startsWith(NODE_MODULES) && dir !== NODE_MODULES; dir = dirname(dir)) {
    const manifest = join(dir, 'package.json');
    if (!existsSync(manifest)) continue;
    const pkg = JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string; version?: string; license?: unknown };
    if (typeof pkg.license === 'string' && pkg.name !== undefined)
      return `${pkg.license} (npm ${pkg.name}@${pkg.version})`;
  }
  return 'unknown';
}

const SOURCES: Source[] = [
  {
    language: 'python',
    roots: ['/usr/lib/python3.11'],
    match: /\.py$/,
    licence: 'PSF-2.0 (CPython 3.11 standard library)',
  },
  { language: 'javascript', roots: [NODE_MODULES], match: /\/lib\/[\w-]+\.js$/, licence: packageLicence },
  {
    language: 'typescript',
    roots: [join(NODE_MODULES, 'ajv/lib'), join(NODE_MODULES, '@jridgewell')],
    match: /[^d]\.ts$/,
    licence: packageLicence,
  },
  {
    language: 'json',
    roots: [NODE_MODULES],
    match: /\/(?:package|tsconfig|schema)[\w-]*\.json$/,
    licence: packageLicence,
  },
  {
    language: 'yaml',
    roots: ['/usr/lib/google-cloud-sdk/lib'],
    match: /\.yaml$/,
    licence: 'Apache-2.0 (Google Cloud SDK)',
  },
  { language: 'markdown', roots: [NODE_MODULES], match: /\/README\.md$/, licence: packageLicence },
  {
    language: 'css',
    roots: [NODE_MODULES, '/usr/share/doc/libjs-bootstrap4'],
    match: /\.css$/,
    licence: (f) => (f.startsWith(NODE_MODULES) ? packageLicence(f) : 'MIT (Bootstrap 4, Debian libjs-bootstrap4)'),
  },
  {
    language: 'html',
    roots: ['/usr/share/doc/libxslt1-dev', '/usr/share/doc/nodejs'],
    match: /\.html$/,
    licence: (f) => (f.includes('libxslt') ? 'MIT (libxslt documentation)' : 'MIT (Node.js documentation)'),
  },
  {
    language: 'xml',
    roots: ['/usr/share/mime/application', '/usr/lib/google-cloud-sdk/platform'],
    match: /\.xml$/,
    licence: (f) => (f.includes('/mime/') ? 'GPL-2.0-or-later (shared-mime-info)' : 'Apache-2.0 (Google Cloud SDK)'),
  },
  {
    language: 'bash',
    roots: ['/usr/lib/perf-core/tests', '/usr/share/doc/git'],
    match: /\.sh$/,
    licence: 'GPL-2.0 (Linux perf tests; git contrib)',
  },
  {
    language: 'sql',
    roots: ['/usr/share/postgresql/15'],
    match: /\.sql$/,
    licence: 'PostgreSQL (PostgreSQL 15 extensions)',
  },
  {
    language: 'php',
    roots: ['/usr/lib/google-cloud-sdk/platform'],
    match: /\.php$/,
    licence: 'Apache-2.0 (Google Cloud SDK, App Engine)',
  },
  {
    language: 'perl',
    roots: ['/usr/share/perl/5.36.0'],
    match: /\.pm$/,
    licence: 'Artistic-1.0-Perl OR GPL-1.0-or-later (Perl 5.36 core modules)',
  },
  {
    language: 'lua',
    roots: ['/usr/share/luajit-2.1.0-beta3/jit', '/usr/share/doc/wrk'],
    match: /\.lua$/,
    licence: (f) => (f.includes('luajit') ? 'MIT (LuaJIT)' : 'Apache-2.0 (wrk examples)'),
  },
  {
    language: 'go',
    roots: ['/usr/share/doc/prometheus', '/usr/share/doc/git'],
    match: /\.go$/,
    licence: (f) => (f.includes('prometheus') ? 'Apache-2.0 (Prometheus examples)' : 'GPL-2.0 (git contrib)'),
  },
  {
    language: 'c',
    roots: ['/usr/share/doc/nettle-dev', '/usr/share/doc/zlib1g-dev', '/usr/share/doc/libxmlsec1-dev'],
    match: /\.c$/,
    licence: (f) =>
      f.includes('zlib')
        ? 'Zlib (zlib examples)'
        : f.includes('nettle')
          ? 'LGPL-3.0-or-later OR GPL-2.0-or-later (Nettle examples)'
          : 'MIT (xmlsec examples)',
  },
  {
    language: 'cpp',
    roots: ['/usr/include/c++/12/bits'],
    match: /\.h$/,
    licence: 'GPL-3.0-or-later WITH GCC-exception-3.1 (libstdc++ 12)',
  },
  {
    language: 'ini',
    roots: ['/usr/lib/systemd/system', '/usr/lib/google-cloud-sdk/platform'],
    match: /^(?:.*\/systemd-[\w@.-]+\.service|.*\.ini)$/,
    licence: (f) => (f.includes('systemd') ? 'LGPL-2.1-or-later (systemd units)' : 'Apache-2.0 (Google Cloud SDK)'),
  },
  {
    language: 'toml',
    roots: ['/usr/lib/google-cloud-sdk/platform', '/usr/lib/node_modules/npm'],
    match: /\.toml$/,
    licence: (f) => (f.includes('google-cloud') ? 'Apache-2.0 (Google Cloud SDK)' : 'Artistic-2.0 (npm)'),
  },
  {
    language: 'makefile',
    roots: [
      '/usr/lib/postgresql/15',
      '/usr/share/python3',
      '/usr/share/java',
      join(NODE_MODULES, 'delayed-stream'),
      join(NODE_MODULES, 'progress'),
    ],
    match: /(?:\.mk|\/Makefile)$/,
    licence: (f) =>
      f.startsWith(NODE_MODULES)
        ? packageLicence(f)
        : f.includes('postgresql')
          ? 'PostgreSQL (PGXS)'
          : 'GPL-2.0-or-later (Debian build helpers)',
  },
  {
    language: 'diff',
    roots: ['/usr/lib/google-cloud-sdk/platform', '/usr/share/doc/haproxy'],
    match: /\.(?:patch|diff)$/,
    licence: (f) => (f.includes('haproxy') ? 'GPL-2.0-or-later (HAProxy)' : 'Apache-2.0 (Google Cloud SDK)'),
  },
  {
    language: 'powershell',
    roots: [join(NODE_MODULES, 'playwright-core/bin'), '/usr/lib/node_modules/corepack/shims'],
    match: /\.ps1$/,
    licence: (f) => (f.includes('corepack') ? 'MIT (corepack)' : packageLicence(f)),
  },
  {
    language: 'text',
    roots: ['/usr/share/common-licenses', '/usr/share/doc/git/RelNotes'],
    match: /(?:\/common-licenses\/[\w.-]+|\.txt)$/,
    licence: (f) =>
      f.includes('common-licenses')
        ? 'verbatim copying permitted (licence texts, Debian base-files)'
        : 'GPL-2.0 (git release notes)',
  },
];

/** shiki's sample names for the languages detection knows. */
const SHIKI: Record<string, string> = {
  javascript: 'javascript',
  typescript: 'typescript',
  python: 'python',
  php: 'php',
  ruby: 'ruby',
  go: 'go',
  rust: 'rust',
  java: 'java',
  c: 'c',
  cpp: 'cpp',
  csharp: 'csharp',
  bash: 'bash',
  shellscript: 'bash',
  sql: 'sql',
  html: 'html',
  css: 'css',
  json: 'json',
  yaml: 'yaml',
  markdown: 'markdown',
  xml: 'xml',
  docker: 'dockerfile',
  diff: 'diff',
  ini: 'ini',
  kotlin: 'kotlin',
  swift: 'swift',
  lua: 'lua',
  toml: 'toml',
  haskell: 'haskell',
  perl: 'perl',
  powershell: 'powershell',
  make: 'makefile',
  hcl: 'hcl',
  scala: 'scala',
  r: 'r',
  elixir: 'elixir',
  zig: 'zig',
};

/**
 * Repositories for the languages the files above and shiki's samples leave with one snippet:
 * each gives PER_REPOSITORY pieces, from as many of its files (in path order, tests left out).
 */
const REPOSITORIES: { language: string; repo: string; commit: string; match: RegExp; licence: string }[] = [
  {
    language: 'dockerfile',
    repo: 'nodejs/docker-node',
    commit: 'f27d936f7d7ccdeec25cd2de33584c1a841f561d',
    match: /(?:^|\/)Dockerfile[\w.-]*$/,
    licence: 'MIT (docker-node)',
  },
  {
    language: 'ruby',
    repo: 'sinatra/sinatra',
    commit: 'cb22afd7902b566b6eaba6c4ea89739494a65d12',
    match: /^lib\/.*\.rb$/,
    licence: 'MIT (Sinatra)',
  },
  {
    language: 'rust',
    repo: 'dtolnay/anyhow',
    commit: '1dbe1862aae650423e3361fbd20b7d17c5109cc3',
    match: /^src\/.*\.rs$/,
    licence: 'MIT OR Apache-2.0 (anyhow)',
  },
  {
    language: 'java',
    repo: 'google/gson',
    commit: '9835b6f90192f79cdf5300c528fc6212455fb6c1',
    match: /^gson\/src\/main\/.*\.java$/,
    licence: 'Apache-2.0 (Gson)',
  },
  {
    language: 'csharp',
    repo: 'JamesNK/Newtonsoft.Json',
    commit: '09bb545d72969ad7fb4ea07db0d5c34f4fc07877',
    match: /^Src\/Newtonsoft\.Json\/.*\.cs$/,
    licence: 'MIT (Json.NET)',
  },
  {
    language: 'kotlin',
    repo: 'square/okio',
    commit: '4164f2976ac7174f3d35d52150e8ffbdbe0acbec',
    match: /^okio\/src\/.*\.kt$/,
    licence: 'Apache-2.0 (Okio)',
  },
  {
    language: 'swift',
    repo: 'Alamofire/Alamofire',
    commit: '7595cbcf59809f9977c5f6378500de2ad73b7ddb',
    match: /^Source\/.*\.swift$/,
    licence: 'MIT (Alamofire)',
  },
  {
    language: 'haskell',
    repo: 'haskell/containers',
    commit: '85a1ab5ee1be91d712ddaf2e61a4b0bce5b7ab1e',
    match: /^containers\/src\/.*\.hs$/,
    licence: 'BSD-3-Clause (containers)',
  },
  {
    language: 'hcl',
    repo: 'terraform-aws-modules/terraform-aws-vpc',
    commit: '82d1929e669efef4e2ad00611b8a68e7a56e049c',
    match: /^examples\/.*\.tf$/,
    licence: 'Apache-2.0 (terraform-aws-vpc)',
  },
  {
    language: 'scala',
    repo: 'scopt/scopt',
    commit: '75cd14c9e1f517e9d1beb8de9e3427e40630f1cb',
    match: /^shared\/src\/main\/.*\.scala$/,
    licence: 'MIT (scopt)',
  },
  {
    language: 'r',
    repo: 'tidyverse/dplyr',
    commit: 'd5e94e7fa8fd4a5f79c1a707d1842216bb4c691f',
    match: /^R\/.*\.R$/,
    licence: 'MIT (dplyr)',
  },
  {
    language: 'elixir',
    repo: 'elixir-lang/gen_stage',
    commit: '72198f86c8cd4ba149e8ee2ad80ab442d6d106be',
    match: /^(?:lib|examples)\/.*\.exs?$/,
    licence: 'Apache-2.0 (GenStage)',
  },
  {
    language: 'zig',
    repo: 'zigtools/zls',
    commit: '113f79a1d120cfda4cf758bc41273d8d15b4e46a',
    match: /^src\/.*\.zig$/,
    licence: 'MIT (ZLS)',
  },
];
const PER_REPOSITORY = 4;

/** `language`'s pieces from a repository cloned (or mirrored) at `dir`, at its commit. */
function repositoryPieces(dir: string, r: (typeof REPOSITORIES)[number]): Snippet[] {
  const git = (...args: string[]): string =>
    execFileSync('git', [`--git-dir=${dir}`, ...args], { encoding: 'utf8', maxBuffer: 64 << 20 });
  const paths = git('ls-tree', '-r', '--name-only', r.commit)
    .split('\n')
    .filter((path) => r.match.test(path) && !/test|spec|bench/i.test(path));
  // Spread over the files (every nth, then the others), one piece of a file, of some substance.
  const step = Math.max(1, Math.floor(paths.length / PER_REPOSITORY));
  const order = [...paths.filter((_, i) => i % step === 0), ...paths.filter((_, i) => i % step !== 0)];
  const taken: Snippet[] = [];
  for (let round = 0; round < 3 && taken.length < PER_REPOSITORY; round++) {
    for (const path of order) {
      if (taken.length >= PER_REPOSITORY) break;
      const piece = pieces(git('show', `${r.commit}:${path}`)).filter(
        (p) => p.length >= 300 && !mostlyComments(p) && !taken.some((t) => t.code === p),
      )[round === 0 ? 0 : round - 1];
      if (piece === undefined) continue;
      const source = `github ${r.repo}@${r.commit.slice(0, 12)} ${path}`;
      taken.push({ language: r.language, source, licence: r.licence, code: piece });
    }
  }
  return taken;
}

const PER_LANGUAGE = 25;
const MAX_CHARS = 1_600;

function files(root: string, match: RegExp, out: string[] = []): string[] {
  if (!existsSync(root)) return out;
  for (const name of readdirSync(root).sort()) {
    const path = join(root, name);
    const st = statSync(path, { throwIfNoEntry: false });
    if (st?.isDirectory() === true && name !== 'test' && name !== 'tests') files(path, match, out);
    else if (st?.isFile() === true && match.test(path) && st.size > 200 && st.size < 400_000) out.push(path);
  }
  return out;
}

/** Pieces of a text as people paste them: runs of whole paragraphs, 5 to 40 lines, at most MAX_CHARS. */
function pieces(text: string): string[] {
  const blocks = text.replace(/\r\n/g, '\n').split(/\n{2,}/);
  const out: string[] = [];
  let cur: string[] = [];
  const flush = (): void => {
    const piece = cur.join('\n\n').trim();
    if (piece.split('\n').length >= 5 && piece.length <= MAX_CHARS) out.push(piece);
    cur = [];
  };
  for (const block of blocks) {
    if ([...cur, block].join('\n\n').split('\n').length > 40 || [...cur, block].join('\n\n').length > MAX_CHARS)
      flush();
    cur.push(block);
  }
  flush();
  return out;
}

/** A piece that is mostly comments (a licence header) says little of its language: left out. */
function mostlyComments(piece: string): boolean {
  const all = piece.split('\n').filter((l) => l.trim() !== '').length;
  const code = piece.replace(/\/\*[\s\S]*?(?:\*\/|$)|<!--[\s\S]*?(?:-->|$)/g, '');
  const lines = code.split('\n').filter((l) => l.trim() !== '');
  if (lines.length * 2 < all) return true;
  const comments = lines.filter((l) => /^\s*(?:#|\/\/|\/?\*|--|;|%|<!--|=(?:head|pod|item|cut))/.test(l));
  return comments.length * 2 > lines.length;
}

const repositories = process.argv[3];
const fromRepositories = (): Snippet[] =>
  repositories === undefined
    ? []
    : REPOSITORIES.flatMap((r) => {
        const name = r.repo.replace('/', '+');
        const dir = [
          join(repositories, name, 'repo', '.git'),
          join(repositories, name, 'repo'),
          join(repositories, name),
        ].find((d) => existsSync(join(d, 'HEAD')));
        return dir === undefined ? [] : repositoryPieces(dir, r);
      });
const FIXTURE = new URL('../test/fixtures/detect-sample.json', import.meta.url);
if (process.argv.includes('--repositories-only')) {
  const kept = (JSON.parse(readFileSync(FIXTURE, 'utf8')) as Snippet[]).filter((s) => !s.source.startsWith('github '));
  const sample = [...kept, ...fromRepositories()];
  writeFileSync(FIXTURE, `${JSON.stringify(sample, null, 1)}\n`);
  console.log(sample.length, 'snippets');
  process.exit(0);
}

const sample: Snippet[] = [];
for (const src of SOURCES) {
  const found = src.roots.flatMap((r) => files(r, src.match));
  // Spread over the files: every nth file, then each file's first pieces, so no one file dominates.
  const step = Math.max(1, Math.floor(found.length / PER_LANGUAGE));
  const chosen = found.filter((_, i) => i % step === 0);
  const taken: Snippet[] = [];
  for (let round = 0; round < 4 && taken.length < PER_LANGUAGE; round++) {
    for (const file of chosen) {
      if (taken.length >= PER_LANGUAGE) break;
      const piece = pieces(readFileSync(file, 'utf8'))[round];
      if (piece === undefined || piece.includes('\u0000')) continue;
      if (src.language !== 'text' && mostlyComments(piece)) continue;
      const licence = typeof src.licence === 'string' ? src.licence : src.licence(file);
      taken.push({ language: src.language, source: file.replace(NODE_MODULES, 'node_modules'), licence, code: piece });
    }
  }
  sample.push(...taken);
}

const shiki = process.argv[2];
if (shiki !== undefined) {
  const pkg = JSON.parse(readFileSync(join(shiki, 'package.json'), 'utf8')) as { version: string };
  for (const [name, language] of Object.entries(SHIKI)) {
    const file = join(shiki, 'samples', `${name}.sample`);
    if (!existsSync(file)) continue;
    sample.push({
      language,
      source: `npm shiki@${pkg.version} samples/${basename(file)}`,
      licence: 'MIT (shiki; the sample names where it was taken from)',
      code: readFileSync(file, 'utf8').trim(),
    });
  }
}

sample.push(...fromRepositories());
writeFileSync(FIXTURE, `${JSON.stringify(sample, null, 1)}\n`);
const by = new Map<string, number>();
for (const s of sample) by.set(s.language, (by.get(s.language) ?? 0) + 1);
console.log(sample.length, 'snippets', by.size, 'languages', Object.fromEntries(by));
