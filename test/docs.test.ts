import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { test } from 'node:test';
import { ROOT } from './helpers/server.ts';

/** Every `.ts` file under a folder of the repository. */
async function tsFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(join(ROOT, dir), { withFileTypes: true, recursive: true })) {
    if (e.isFile() && e.name.endsWith('.ts')) out.push(relative(ROOT, join(e.parentPath, e.name)));
  }
  return out.sort();
}

/** A document's headings and bold labels (`**Safe retries.**`): what a comment may cite as a section. */
async function sections(doc: string): Promise<string[]> {
  const text = await readFile(join(ROOT, doc), 'utf8');
  const headings = text
    .split('\n')
    .filter((l) => /^#+ /.test(l))
    .map((l) => l.replace(/^#+ /, '').trim());
  const labels = [...text.matchAll(/\*\*([^*]+?)\.?\*\*/g)].map((m) => m[1] as string);
  return [...headings, ...labels];
}

/** The comments of a source file, each on one line. */
async function comments(file: string): Promise<string[]> {
  const text = await readFile(join(ROOT, file), 'utf8');
  return (text.match(/\/\/[^\n]*|\/\*[\s\S]*?\*\//g) ?? []).map((c) =>
    c.replace(/\n\s*\*\s?/g, ' ').replace(/\s+/g, ' '),
  );
}

/** The code the docs speak of, and the helpers of the tests (CONTRIBUTING, What a change comes with). */
const cited = async (): Promise<string[]> => [
  ...(await tsFiles('src')),
  ...(await tsFiles('scripts')),
  ...(await tsFiles('bench')),
  ...(await tsFiles('test/helpers')),
];

test('code comments cite README, ARCHITECTURE and CONTRIBUTING sections that exist', async () => {
  const docs: Record<string, string[]> = {
    README: await sections('README.md'),
    ARCHITECTURE: await sections('ARCHITECTURE.md'),
    CONTRIBUTING: await sections('CONTRIBUTING.md'),
  };
  const missing: string[] = [];
  let checked = 0;
  for (const file of await cited())
    for (const c of await comments(file))
      for (const m of c.matchAll(/\((README|ARCHITECTURE|CONTRIBUTING)(?:\.md)?, ([^)]*?)\)/g)) {
        const section = (m[2] as string).split(/[:;]/)[0]?.trim() ?? '';
        checked++;
        if (!(docs[m[1] as string] ?? []).some((s) => s.startsWith(section)))
          missing.push(`${file}: (${m[1]}, ${section})`);
      }
  assert.ok(checked > 100, `the comments cite the docs (${checked} found)`);
  assert.deepEqual(missing, [], 'each cited section is a heading or a bold label of that document');
});

test('code comments name files that exist in the repository', async () => {
  const missing: string[] = [];
  for (const file of await cited())
    for (const c of await comments(file))
      for (const m of c.matchAll(/(?<![\w/.@-])((?:[\w-]+\/)+[\w.-]+\.(?:ts|mjs|md|json|cfg|yaml|sql))\b/g)) {
        const path = m[1] as string;
        // A pattern (`migrations/NNN-name.sql`, `DATA_DIR/format.json`) names no one file.
        if (/\b[A-Z][A-Z_]+\b/.test(path)) continue;
        const candidates = [
          path,
          join('src', path),
          join('src/pg', path),
          join(dirname(file), path),
          join('test', path),
        ];
        if (!candidates.some((p) => existsSync(join(ROOT, p)))) missing.push(`${file}: ${path}`);
      }
  assert.deepEqual(missing, []);
});

/** The step names in a side's `steps: [...]`, a call like `crossSite(ours)` by its name, `proxy?` for one spread in only when configured. */
async function stepsOf(file: string): Promise<string[]> {
  const text = await readFile(join(ROOT, file), 'utf8');
  const list = /steps: \[([\s\S]*?)\],\n/.exec(text)?.[1];
  assert.ok(list !== undefined, `${file} lists its steps`);
  return list
    .split(/,\s*(?![^(]*\))/)
    .map((s) => s.trim())
    .filter((s) => s !== '')
    .map((s) => (s.startsWith('...') ? `${/\[(\w+?)(?:SignIn)?\(/.exec(s)?.[1] ?? s}?` : (s.split('(')[0] as string)));
}

test("ARCHITECTURE and CONTRIBUTING give each side's steps in the order the side runs them", async () => {
  const api = `[${(await stepsOf('src/api/side.ts')).join(', ')}]`;
  const web = `[${(await stepsOf('src/web/side.ts')).join(', ')}]`;
  assert.match(api, /^\[cors, route, .*handle\]$/);
  assert.match(web, /^\[session, proxy\?, route, .*handle\]$/);
  for (const doc of ['ARCHITECTURE.md', 'CONTRIBUTING.md']) {
    const text = await readFile(join(ROOT, doc), 'utf8');
    const lists = [...text.matchAll(/\[(?:cors|session), [\w?, ]+\]/g)].map((m) => m[0]);
    assert.deepEqual(lists.sort(), [api, web].sort(), `${doc}'s step lists`);
  }
});

test("ARCHITECTURE's code map has a line for every folder and top-level file of src/", async () => {
  const text = await readFile(join(ROOT, 'ARCHITECTURE.md'), 'utf8');
  const map = /\n## Code map\n([\s\S]*?)\n## /.exec(text)?.[1];
  assert.ok(map !== undefined, 'ARCHITECTURE.md has a Code map section');
  const missing: string[] = [];
  for (const e of await readdir(join(ROOT, 'src'), { withFileTypes: true })) {
    // A folder is `src/name/` in the map's block or a `**`name/`**` bullet; a file is `src/name` in the block.
    const named = e.isDirectory()
      ? map.includes(`\nsrc/${e.name}/ `) || map.includes(`**\`${e.name}/\`**`)
      : map.includes(`\nsrc/${e.name} `);
    if (!named) missing.push(e.isDirectory() ? `src/${e.name}/` : `src/${e.name}`);
  }
  assert.deepEqual(missing, [], 'each has its line in the code map');
});

test("no line of src/, scripts/ or bench/ is wider than the formatter's line width", async () => {
  // The formatter breaks code but not strings, templates or comments: those are wrapped by hand.
  const width = Number(/"lineWidth": (\d+)/.exec(await readFile(join(ROOT, 'biome.jsonc'), 'utf8'))?.[1]);
  assert.equal(width, 120);
  const files = [...(await tsFiles('src')), ...(await tsFiles('scripts')), ...(await tsFiles('bench'))];
  const wide: string[] = [];
  for (const file of files) {
    const lines = (await readFile(join(ROOT, file), 'utf8')).split('\n');
    lines.forEach((line, i) => {
      // A regular expression literal alone on its line: cut, it would have to be built from strings at run time.
      if (line.length > width && !/^\s*\/.+\/[dgimsuvy]*,?$/.test(line)) wide.push(`${file}:${i + 1}`);
    });
  }
  assert.ok(files.length > 200, `the source files are found (${files.length})`);
  assert.deepEqual(wide, [], `each line is at most ${width} characters`);
});

test("the README's Run it shows every command .ci/run runs, so a reader runs the tests CI runs", async () => {
  const ci = await readFile(join(ROOT, '.ci/run'), 'utf8');
  const readme = await readFile(join(ROOT, 'README.md'), 'utf8');
  const runIt = readme.slice(readme.indexOf('## Run it'), readme.indexOf('## Configuration'));
  const commands = [...ci.matchAll(/^(npm (?:test|run [\w:]+))\s*$/gm)].map((m) => m[1] as string);
  assert.ok(commands.includes('npm test') && commands.length >= 4, `.ci/run's commands: ${commands.join(', ')}`);
  for (const c of commands) assert.ok(runIt.includes(c), `Run it shows ${c}`);
});

test('the README stays a manual for users: under 700 lines (figures go to bench/README.md, code to ARCHITECTURE.md)', async () => {
  const lines = (await readFile(join(ROOT, 'README.md'), 'utf8')).split('\n').length - 1; // as wc -l counts
  assert.ok(lines < 700, `README.md has ${lines} lines`);
});
