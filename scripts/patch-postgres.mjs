// Run by `npm ci` (package.json, postinstall): mends two known faults of the pinned
// PostgreSQL driver (postgres@3.4.9) until a release fixes them. Each ends the process, and
// each happens when a connection is lost (README, Running on PostgreSQL):
//
// - A small write is sent on the next turn of the event loop; when the connection closes
//   first (the database restarted or stopped), that turn writes to a socket that is gone and
//   throws where nobody can catch it. Patched, the write fails the queries waiting on it with
//   the driver's own CONNECTION_CLOSED, and a closed connection forgets what it had not sent,
//   so the next connection starts clean.
// - A new connection first reads the database's array types, and nothing waits for that
//   query: lost meanwhile, it rejects where nobody catches it. Patched, its failure is
//   dropped; the connection's own error handling has failed the query that opened it
//   (test/pg/driver.test.ts).
//
// Idempotent, edit by edit; it refuses any other version of the driver, so an upgrade is
// looked at again.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', 'node_modules', 'postgres');
const MARK = '/* patched: scripts/patch-postgres.mjs */';

if (!existsSync(join(root, 'package.json'))) process.exit(0); // Not installed (e.g. a partial install).
const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
if (version !== '3.4.9') {
  console.error(`scripts/patch-postgres.mjs: expected postgres 3.4.9, found ${version}; review the patch`);
  process.exit(1);
}

const edits = [
  [
    'function nextWrite(fn) {\n    const x = socket.write(chunk, fn)',
    `function nextWrite(fn) {\n    ${MARK}\n    if (!socket) {\n      nextWriteTimer !== null && clearImmediate(nextWriteTimer)\n      chunk = nextWriteTimer = null\n      error(Errors.connection('CONNECTION_CLOSED', options))\n      return false\n    }\n    const x = socket.write(chunk, fn)`,
  ],
  // Both ways a connection ends cancel the pending write: forget it too, or it is never sent again.
  ['    clearImmediate(nextWriteTimer)\n    if (socket) {', '    clearImmediate(nextWriteTimer)\n    chunk = nextWriteTimer = null\n    if (socket) {'],
  [
    '    clearImmediate(nextWriteTimer)\n    socket.removeListener',
    '    clearImmediate(nextWriteTimer)\n    chunk = nextWriteTimer = null\n    socket.removeListener',
  ],
  // The array types' query: its failure has failed the connection's first query already.
  ['        return fetchArrayTypes()\n', `        return fetchArrayTypes().catch(() => {}) ${MARK}\n`],
];

for (const file of ['src/connection.js', 'cjs/src/connection.js', 'cf/src/connection.js']) {
  const path = join(root, file);
  if (!existsSync(path)) continue;
  let text = readFileSync(path, 'utf8');
  for (const [from, to] of edits) {
    if (text.includes(to)) continue;
    if (!text.includes(from)) {
      console.error(`scripts/patch-postgres.mjs: ${file} does not read as expected; review the patch`);
      process.exit(1);
    }
    text = text.replace(from, to);
  }
  writeFileSync(path, text);
}
