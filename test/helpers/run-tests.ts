import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { constants, tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * `npm test`'s outer command: runs the command it is given (c8 over node's test runner), then
 * prints what test/helpers/skips-reporter.mjs listed as skipped, so the run's last lines say
 * which tests did not run and what to install. Exits as the command did.
 */
const [command, ...args] = process.argv.slice(2);
if (command === undefined) {
  process.stderr.write('usage: node --import tsx test/helpers/run-tests.ts <command> [args...]\n');
  process.exit(2);
}
const dir = mkdtempSync(join(tmpdir(), 'paste-skips-'));
const list = join(dir, 'skipped');
const child = spawn(command, args, { stdio: 'inherit', env: { ...process.env, TEST_SKIPS_FILE: list } });
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => {
  let skipped = '';
  try {
    skipped = readFileSync(list, 'utf8');
  } catch {
    // Nothing was skipped (or the runner never started): nothing to add.
  }
  rmSync(dir, { recursive: true, force: true });
  if (skipped !== '') process.stdout.write(`\n${skipped}`);
  process.exit(code ?? 128 + (signal === null ? 0 : constants.signals[signal]));
});
child.on('error', (err) => {
  rmSync(dir, { recursive: true, force: true });
  process.stderr.write(`cannot run ${command}: ${err.message}\n`);
  process.exit(127);
});
