import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { isErrno } from '../storage/errors.ts';
import type { DurableFiles } from './files.ts';

/** Where the key lives under DATA_DIR (beside the sessions, as it always has). */
export const SERVER_KEY_PATH = ['sessions', 'server.key'] as const;

/** 32 random bytes, hex-encoded on disk. */
const KEY_RE = /^[0-9a-f]{64}$/;

/**
 * The web side's signing key at `path`, made on first use. It signs what the web hands out
 * and must recognise later without storing it (anonymous CSRF tokens, unlock grants, login
 * budget keys), so it persists across restarts. DurableFiles writes through a 0600 temp
 * file and links it into place exclusively, so two processes starting at once agree on one key.
 */
export async function loadServerKey(files: DurableFiles, path: string): Promise<Buffer> {
  for (;;) {
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch (err) {
      // Not there yet: make one. Losing the race to another process just means reading its key.
      if (!isErrno(err, 'ENOENT')) throw err;
      await files.createFile(path, randomBytes(32).toString('hex'));
      continue;
    }
    const hex = text.trim();
    // A damaged key is not silently replaced: the operator should learn the folder was touched.
    if (!KEY_RE.test(hex)) throw new Error(`${path} is not a server key (64 hex digits); delete it to make a new one`);
    return Buffer.from(hex, 'hex');
  }
}
