import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

/**
 * The browser module of encrypted pastes (web/client/encrypted-paste.ts), bundled with the
 * modules it shares with the server (the envelope, the highlighter, language detection,
 * the QR encoder) into one ES module, so the browser runs the very code the server does.
 * `npm run build` writes the bundle beside the compiled code (scripts/bundle-client.ts);
 * from the sources (`npm start`, the tests) it is bundled on first use with esbuild, which
 * tsx, what runs the sources, brings along.
 */

export const CLIENT_PATH = '/static/encrypted-paste.js';

const ENTRY = fileURLToPath(new URL('./client/encrypted-paste.ts', import.meta.url));
/** Where `npm run build` puts the bundle, beside this module in dist/. */
export const BUILT = fileURLToPath(new URL('./encrypted-paste.bundle.js', import.meta.url));

/** The bundle's text, made from the sources. */
export function bundleClient(): string {
  // esbuild is loaded only here: a compiled build (dist/) reads the bundle and never needs it.
  const esbuild = createRequire(import.meta.url)('esbuild') as typeof import('esbuild');
  const out = esbuild.buildSync({
    entryPoints: [ENTRY],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    minify: true,
    legalComments: 'none',
    write: false,
  });
  return (out.outputFiles[0] as { text: string }).text;
}

let made: { body: Buffer; etag: string } | undefined;

/** The bundle and its entity tag, made once per process. */
export function clientAsset(): { body: Buffer; etag: string } {
  if (made === undefined) {
    const body = Buffer.from(existsSync(BUILT) ? readFileSync(BUILT, 'utf8') : bundleClient());
    made = { body, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 16)}"` };
  }
  return made;
}

/** The module's address, carrying its content's hash so browsers keep it for good. */
export const clientUrl = (): string => `${CLIENT_PATH}?v=${clientAsset().etag.slice(1, 9)}`;
