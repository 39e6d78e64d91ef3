import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';

const root = new URL('..', import.meta.url);

test('the Docker image runs node with the same V8 flags as npm start', () => {
  const pkg = JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as { scripts: { start: string } };
  const start = pkg.scripts.start.split(/\s+/);
  const startFlags = start.slice(start.indexOf('node') + 1, start.indexOf('--import'));
  const cmdLine = readFileSync(new URL('Dockerfile', root), 'utf8').match(/^CMD (\[.*\])$/m);
  assert.ok(cmdLine, 'the Dockerfile has an exec-form CMD');
  const cmd = JSON.parse(cmdLine[1] as string) as string[];
  assert.deepEqual(cmd.slice(cmd.indexOf('node') + 1, cmd.indexOf('dist/main.js')), startFlags);
  assert.ok(startFlags.length > 0 && startFlags.every((f) => f.startsWith('--')), `flags: ${startFlags.join(' ')}`);
});
