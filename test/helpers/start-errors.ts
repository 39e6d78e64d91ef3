import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { events, ROOT } from './server.ts';

/**
 * The start-up fault tests' tools (test/faults/startup*.test.ts): run the server or the CLI
 * as a process to its end, and check that it said one line.
 */

/** Runs `src/main.ts` or `src/cli.ts` to its end; answers its exit code and what it printed. */
export function runScript(
  script: 'main' | 'cli',
  env: Record<string, string>,
  args: string[] = [],
  uid?: number,
): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const proc = spawn(process.execPath, ['--import', 'tsx', join(ROOT, `src/${script}.ts`), ...args], {
      cwd: ROOT,
      env: { ...process.env, PORT: '0', HOST: '127.0.0.1', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(uid === undefined ? {} : { uid, gid: uid }),
    });
    let out = '';
    proc.stdout.on('data', (d: Buffer) => (out += d.toString()));
    proc.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const timer = setTimeout(() => proc.kill('SIGKILL'), 20_000);
    proc.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
  });
}

/** The one line the CLI printed: no stack, no error object. */
export function oneLine(out: string, pattern: RegExp): void {
  const lines = out.trim().split('\n');
  assert.equal(lines.length, 1, out);
  assert.match(lines[0] ?? '', pattern);
}

/** The one event the server logged: an error whose message matches. */
export function oneEvent(out: string, pattern: RegExp): void {
  const all = events(out);
  assert.equal(all.length, 1, out);
  assert.equal(all[0]?.level, 'error');
  assert.match(all[0]?.message ?? '', pattern);
  assert.equal(all[0]?.['stack'], undefined, 'no stack');
}
