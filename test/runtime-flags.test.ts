import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { startFlags } from '../bench/proc.ts';

const root = new URL('..', import.meta.url);

test('the Docker image runs node with the same V8 flags as npm start', () => {
  const flags = startFlags();
  const cmdLine = readFileSync(new URL('Dockerfile', root), 'utf8').match(/^CMD (\[.*\])$/m);
  assert.ok(cmdLine, 'the Dockerfile has an exec-form CMD');
  const cmd = JSON.parse(cmdLine[1] as string) as string[];
  assert.deepEqual(cmd.slice(cmd.indexOf('node') + 1, cmd.indexOf('dist/main.js')), flags);
  assert.ok(flags.length > 0 && flags.every((f) => f.startsWith('--')), `flags: ${flags.join(' ')}`);
});
