import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { type IncomingHttpHeaders, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve as resolvePath } from 'node:path';

/** The repository root, where `npm` scripts run. */
export const ROOT = new URL('../', import.meta.url).pathname;

/** A server process the bench started, with the times it took to come up. */
export interface Child {
  label: string;
  pid: number;
  port: number;
  /** ms from spawn to the "listening on" line. */
  listeningMs: number;
  output: () => string;
  stop: () => Promise<void>;
}

const children = new Set<ChildProcess>();
const tempDirs = new Set<string>();

export async function tempDir(prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), `paste-bench-${prefix}-`));
  tempDirs.add(dir);
  return dir;
}

export async function removeTempDir(dir: string): Promise<void> {
  tempDirs.delete(dir);
  await rm(dir, { recursive: true, force: true });
}

/** Spawns `argv` and resolves once it prints `listening on http://host:PORT`. */
export async function spawnServer(label: string, argv: string[], env: Record<string, string>): Promise<Child> {
  const [cmd, ...args] = argv as [string, ...string[]];
  const t0 = performance.now();
  const proc = spawn(cmd, args, {
    cwd: ROOT,
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(proc);
  let out = '';
  const exited = new Promise<void>((resolve) =>
    proc.once('exit', () => {
      children.delete(proc);
      resolve();
    }),
  );
  proc.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${label} did not start within 60 s:\n${out}`)), 60_000);
    proc.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /listening on http:\/\/[^:\s]+:(\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    });
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`${label} exited before listening:\n${out}`));
    });
  });
  const listeningMs = performance.now() - t0;
  const stop = async (): Promise<void> => {
    if (proc.exitCode !== null || proc.signalCode !== null) return;
    proc.kill('SIGTERM');
    const killer = setTimeout(() => proc.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(killer);
  };
  return { label, pid: proc.pid ?? 0, port, listeningMs, output: () => out, stop };
}

/** Spawns a helper process (the load generator) that cleanupAll kills if the bench is interrupted. */
export function spawnTracked(cmd: string, args: string[]): ChildProcess {
  const proc = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(proc);
  proc.once('exit', () => children.delete(proc));
  return proc;
}

/** Kills every child still running and removes every temp folder. Safe to call twice. */
export async function cleanupAll(): Promise<void> {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await Promise.all([...tempDirs].map((d) => removeTempDir(d)));
}

/** Cleans up on Ctrl-C, SIGTERM and uncaught errors, then exits. */
export function installCleanup(): void {
  const bail = (code: number) => (): void => {
    void cleanupAll().finally(() => process.exit(code));
  };
  process.once('SIGINT', bail(130));
  process.once('SIGTERM', bail(143));
  process.once('uncaughtException', (err) => {
    console.error(err);
    bail(1)();
  });
}

/** Resident and peak memory of a process in MB, from /proc/<pid>/status. */
export async function memoryMb(pid: number): Promise<{ rss: number; peak: number }> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = (key: string): number => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { rss: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024 };
}

/** One GET; resolves with the status, headers and body (for probes, not for load). */
export function get(
  port: number,
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: string; headers: IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    const r = request({ host: '127.0.0.1', port, path, headers, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
    });
    r.on('error', reject);
    r.end();
  });
}

/**
 * The V8 flags the server runs with in production: those `npm start` gives node (the
 * Dockerfile's CMD repeats them; a test keeps the two equal). See bench/README.md.
 * BENCH_SERVER_FLAGS="..." replaces them, to measure others.
 */
export const SERVER_NODE_FLAGS = serverFlags(ROOT);

function serverFlags(root: string): string[] {
  return process.env['BENCH_SERVER_FLAGS']?.split(' ').filter(Boolean) ?? startFlags(root);
}

/** The node flags in `root`'s package.json `start` script: the words between `node` and `--import`. */
export function startFlags(root: string = ROOT): string[] {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: { start: string } };
  const words = pkg.scripts.start.split(/\s+/);
  return words.slice(words.indexOf('node') + 1, words.indexOf('--import'));
}

/**
 * The checkout whose server is "ours": BENCH_OURS_ROOT=/path/to/other/checkout benches that
 * build (for a before/after comparison in one run), else this repository. The bench's own
 * code, the seeding and the reference always come from this repository.
 */
export function oursRoot(): string {
  const env = process.env['BENCH_OURS_ROOT'];
  if (env === undefined || env === '') return ROOT;
  const root = resolvePath(env);
  return root.endsWith('/') ? root : `${root}/`;
}

/**
 * How OUR server is started: `node <flags> <root>/dist/main.js` after `npm run build` in
 * the root (see oursRoot). The flags are those of that root's `npm start`, unless
 * BENCH_SERVER_FLAGS is set. If the build fails in this repository the server runs through
 * tsx instead; a failed build of another root stops the bench, since a comparison of a
 * build with a tsx run would mean nothing.
 */
export async function ourServerArgv(): Promise<{ argv: string[]; how: string; root: string }> {
  const root = oursRoot();
  const other = root !== ROOT;
  const flags = other ? serverFlags(root) : SERVER_NODE_FLAGS;
  const build = spawn('npm', ['run', '--silent', 'build'], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(build);
  let out = '';
  build.stdout.on('data', (d: Buffer) => (out += d.toString()));
  build.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const code = await new Promise<number | null>((resolve) => build.once('exit', (c) => resolve(c)));
  children.delete(build);
  const where = other ? root : 'this repository';
  const failed = `npm run build failed in ${where} (exit ${code}):\n${out.trim().split('\n').slice(0, 10).join('\n')}`;
  if (code === 0) {
    const main = join(root, 'dist/main.js');
    return {
      argv: [process.execPath, ...flags, main],
      how: `node ${flags.join(' ')} ${other ? main : 'dist/main.js'} (npm run build in ${where})`,
      root,
    };
  }
  if (other) throw new Error(failed);
  console.warn(`${failed}\nfalling back to tsx`);
  return {
    argv: [process.execPath, ...flags, '--import', 'tsx', join(root, 'src/main.ts')],
    how: 'node --import tsx src/main.ts (build failed)',
    root,
  };
}

export const refServerArgv = (): string[] => [process.execPath, '--import', 'tsx', join(ROOT, 'bench/reference.ts')];
