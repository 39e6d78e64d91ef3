import { readFileSync } from 'node:fs';

/** The driver this server runs on: postgres 3.4.9 with the fixes of vendor/README.md. */
export const DRIVER_VERSION = '3.4.9-pastebin.1';

/** The comment each of the patch's two guards carries in the driver's connection.js. */
const DRIVER_MARK = '/* patched: postgres 3.4.9-pastebin.1, PATCHES.md */';

/**
 * Why the driver at `entry` (its module as this file resolves it, the one `import('postgres')`
 * loads) must not be used, or null when it is the vendored one. Without the fixes a lost
 * connection ends the process, so an install that skipped the tarball is refused at start.
 */
export function driverProblem(entry: string = import.meta.resolve('postgres')): string | null {
  const fix = `not ${DRIVER_VERSION} with the fixes of vendor/README.md; reinstall with npm ci`;
  let version: unknown;
  let source: string;
  try {
    // The package's exports send `import` to ./src/index.js, beside ./src/connection.js.
    version = (JSON.parse(readFileSync(new URL('../package.json', entry), 'utf8')) as { version?: unknown }).version;
    source = readFileSync(new URL('./connection.js', entry), 'utf8');
  } catch (err) {
    return `the PostgreSQL driver cannot be read (${err instanceof Error ? err.message : String(err)}), ${fix}`;
  }
  if (version !== DRIVER_VERSION) return `the PostgreSQL driver installed is postgres ${String(version)}, ${fix}`;
  if (source.split(DRIVER_MARK).length !== 3)
    return (
      `the PostgreSQL driver installed (postgres ${DRIVER_VERSION}) lacks the fixes of vendor/README.md in its ` +
      'connection.js; reinstall with npm ci'
    );
  return null;
}
