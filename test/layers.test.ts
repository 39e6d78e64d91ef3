import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, test } from 'node:test';
import { ROOT } from './helpers/server.ts';

/**
 * The layering rule of src/, written down once: in ARCHITECTURE.md's Layers section, as a
 * numbered list of layers, lowest first. A file may import from its own folder and from
 * layers listed above its own; never from its own line's other entries or from below.
 */
async function readLayers(): Promise<Map<string, number>> {
  const doc = await readFile(join(ROOT, 'ARCHITECTURE.md'), 'utf8');
  const start = doc.indexOf('<!-- layers -->');
  const end = doc.indexOf('<!-- /layers -->');
  assert.ok(
    start !== -1 && end > start,
    'ARCHITECTURE.md marks its list of layers with <!-- layers --> ... <!-- /layers -->',
  );
  const layers = new Map<string, number>();
  for (const line of doc.slice(start, end).split('\n')) {
    const m = /^(\d+)\. (.+)$/.exec(line.trim());
    if (m === null) continue;
    for (const unit of (m[2] as string).split(',').map((u) => u.trim().replace(/`/g, '').split(' ')[0] as string))
      layers.set(unit, Number(m[1]));
  }
  return layers;
}

/** `src/web/pages/x.ts` → `web/`; `src/app.ts` → `app.ts`. */
const unitOf = (file: string): string => {
  const rel = relative(join(ROOT, 'src'), file);
  const slash = rel.indexOf('/');
  return slash === -1 ? rel : `${rel.slice(0, slash)}/`;
};

async function sourceFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...(await sourceFiles(p)));
    else if (e.name.endsWith('.ts')) out.push(p);
  }
  return out;
}

interface Edge {
  from: string;
  to: string;
}

/** Every relative import (values and types alike) of every file under src/. */
async function importGraph(): Promise<Edge[]> {
  const edges: Edge[] = [];
  for (const file of await sourceFiles(join(ROOT, 'src'))) {
    const text = await readFile(file, 'utf8');
    for (const m of text.matchAll(/^(?:import|export)\s[^;]*?from\s+'(\.[^']+)'/gms)) {
      edges.push({ from: file, to: resolve(dirname(file), m[1] as string) });
    }
  }
  return edges;
}

/** The imports that break the rule, as `from → to` lines. */
function violations(edges: readonly Edge[], layers: ReadonlyMap<string, number>): string[] {
  const bad: string[] = [];
  for (const { from, to } of edges) {
    const a = unitOf(from);
    const b = unitOf(to);
    if (a === b) continue;
    const ra = layers.get(a);
    const rb = layers.get(b);
    const where = `${relative(ROOT, from)} → ${relative(ROOT, to)}`;
    if (ra === undefined) bad.push(`${where}: ${a} is not in ARCHITECTURE.md's list of layers`);
    else if (rb === undefined) bad.push(`${where}: ${b} is not in ARCHITECTURE.md's list of layers`);
    else if (rb >= ra) bad.push(`${where}: layer ${ra} (${a}) may not import layer ${rb} (${b})`);
  }
  return bad;
}

/**
 * The import circles among files, each as the files on it, in order. A circle, even of
 * types only, means neither file can be read or moved without the other.
 */
function cycles(edges: readonly Edge[]): string[][] {
  const next = new Map<string, string[]>();
  for (const { from, to } of edges) next.set(from, [...(next.get(from) ?? []), to]);
  const done = new Set<string>();
  const found: string[][] = [];
  const path: string[] = [];
  const visit = (file: string): void => {
    const at = path.indexOf(file);
    if (at !== -1) {
      found.push(path.slice(at).map((f) => relative(ROOT, f)));
      return;
    }
    if (done.has(file)) return;
    path.push(file);
    for (const to of next.get(file) ?? []) visit(to);
    path.pop();
    done.add(file);
  };
  for (const file of next.keys()) visit(file);
  return found;
}

/**
 * Every way a file of the units `from` reaches a file of the units `to` through imports, types
 * included and through any files between: one `a → b → c` line per file reached first.
 */
function reaches(edges: readonly Edge[], from: ReadonlySet<string>, to: ReadonlySet<string>): string[] {
  const next = new Map<string, string[]>();
  for (const { from: a, to: b } of edges) next.set(a, [...(next.get(a) ?? []), b]);
  const found: string[] = [];
  for (const start of next.keys()) {
    if (!from.has(unitOf(start))) continue;
    const came = new Map<string, string>([[start, start]]);
    const queue = [start];
    while (queue.length > 0) {
      const file = queue.shift() as string;
      for (const b of next.get(file) ?? []) {
        if (came.has(b)) continue;
        came.set(b, file);
        if (!to.has(unitOf(b))) {
          queue.push(b);
          continue;
        }
        const path = [b];
        for (let f = file; f !== start; f = came.get(f) as string) path.unshift(f);
        found.push([start, ...path].map((f) => relative(ROOT, f)).join(' → '));
      }
    }
  }
  return found;
}

/** The backends and the sides: both build on the domain, and neither knows the other. */
const BACKENDS: ReadonlySet<string> = new Set(['store/', 'pg/']);
const SIDES: ReadonlySet<string> = new Set(['api/', 'web/']);

describe('layers', () => {
  test('every import in src/ points down ARCHITECTURE.md’s list of layers', async () => {
    const layers = await readLayers();
    const edges = await importGraph();
    assert.ok(edges.length > 100, `found ${edges.length} imports`);
    assert.deepEqual(violations(edges, layers), []);
  });

  test('every folder and top-level file of src/ has its place in the list', async () => {
    const layers = await readLayers();
    const units = new Set((await sourceFiles(join(ROOT, 'src'))).map(unitOf));
    assert.deepEqual([...units].filter((u) => !layers.has(u)).sort(), []);
    assert.deepEqual([...layers.keys()].filter((u) => !units.has(u)).sort(), [], 'the list names nothing that is gone');
  });

  test('the backends (store/, pg/) are chosen in one place: only server.ts and cli.ts import them', async () => {
    const backends = new Set(['store/', 'pg/']);
    const composition = new Set(['server.ts', 'cli.ts']);
    const bad = (await importGraph())
      .filter(
        ({ from, to }) => backends.has(unitOf(to)) && unitOf(from) !== unitOf(to) && !composition.has(unitOf(from)),
      )
      .map(({ from, to }) => `${relative(ROOT, from)} → ${relative(ROOT, to)}`);
    assert.deepEqual(bad, []);
  });

  test('the backends (store/, pg/) never import the sides (api/, web/), types included, not even through other files', async () => {
    assert.deepEqual(reaches(await importGraph(), BACKENDS, SIDES), []);
  });

  test('the reach check finds a side imported directly or through other files, and nothing else', () => {
    const src = join(ROOT, 'src');
    const edge = (from: string, to: string): Edge => ({ from: join(src, from), to: join(src, to) });
    assert.deepEqual(reaches([edge('store/a.ts', 'paste/b.ts'), edge('api/c.ts', 'paste/b.ts')], BACKENDS, SIDES), []);
    assert.deepEqual(reaches([edge('store/a.ts', 'web/b.ts')], BACKENDS, SIDES), ['src/store/a.ts → src/web/b.ts']);
    assert.deepEqual(
      reaches(
        [edge('pg/a.ts', 'backend.ts'), edge('backend.ts', 'api/v1/c.ts'), edge('api/v1/c.ts', 'web/d.ts')],
        BACKENDS,
        SIDES,
      ),
      ['src/pg/a.ts → src/backend.ts → src/api/v1/c.ts'],
    );
  });

  test('no file in src/ imports itself through others, types included', async () => {
    assert.deepEqual(cycles(await importGraph()), []);
  });

  test('the circle check finds a circle of any length, and nothing in a chain', () => {
    const src = join(ROOT, 'src');
    const edge = (from: string, to: string): Edge => ({ from: join(src, from), to: join(src, to) });
    assert.deepEqual(cycles([edge('web/a.ts', 'web/b.ts'), edge('web/b.ts', 'web/c.ts')]), []);
    assert.deepEqual(cycles([edge('web/a.ts', 'web/b.ts'), edge('web/b.ts', 'web/a.ts')]), [
      ['src/web/a.ts', 'src/web/b.ts'],
    ]);
    assert.equal(
      cycles([edge('a.ts', 'web/b.ts'), edge('web/b.ts', 'web/c.ts'), edge('web/c.ts', 'web/b.ts')]).length,
      1,
      'a circle reached from outside it',
    );
  });

  test('only src/pg/ loads the PostgreSQL driver, and only with import(), so the filesystem backend never does', async () => {
    const bad: string[] = [];
    for (const file of await sourceFiles(join(ROOT, 'src'))) {
      const text = await readFile(file, 'utf8');
      const where = relative(ROOT, file);
      const inPg = where.startsWith('src/pg/');
      for (const m of text.matchAll(/^(import|export)(\s+type)?\s[^;]*?from\s+'postgres'/gms))
        if (!inPg || m[2] === undefined) bad.push(`${where}: ${m[0].split('\n')[0]}`);
      for (const m of text.matchAll(/(?:import|require)\(\s*'postgres'\s*\)/g))
        if (!inPg) bad.push(`${where}: ${m[0]}`);
    }
    assert.deepEqual(bad, []);
  });

  test('the check refuses an import that points up or sideways', () => {
    const layers = new Map([
      ['http/', 1],
      ['store/', 1],
      ['paste/', 2],
      ['api/', 3],
    ]);
    const src = join(ROOT, 'src');
    const edge = (from: string, to: string): Edge => ({ from: join(src, from), to: join(src, to) });
    assert.deepEqual(violations([edge('api/a.ts', 'paste/b.ts'), edge('paste/b.ts', 'paste/c.ts')], layers), []);
    assert.equal(violations([edge('store/a.ts', 'paste/b.ts')], layers).length, 1, 'up');
    assert.equal(violations([edge('store/a.ts', 'http/b.ts')], layers).length, 1, 'sideways, within a line');
    assert.equal(violations([edge('web/a.ts', 'http/b.ts')], layers).length, 1, 'a folder the list lacks');
  });
});
