import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { isErrno, type DurableFiles } from '../store/files.ts';

/** 32 random bytes, hex-encoded on disk. */
const KEY_RE = /^[0-9a-f]{64}$/;

/**
 * The server's signing key at `path`, made on first use. It signs what the server hands
 * out and must recognise later without storing it (anonymous CSRF tokens, unlock grants),
 * so it persists across restarts. DurableFiles writes through a 0600 temp file and links
 * it into place exclusively, so two processes starting at once still agree on one key.
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

/** HMAC-SHA256 of `purpose` and `data` in base64url; the purpose keeps one use's MAC from passing as another's. */
export const sign = (key: Buffer, purpose: string, data: string): string =>
  createHmac('sha256', key).update(`${purpose}\0${data}`).digest('base64url');

/** Whether `mac` is the signature of `data` for `purpose`, in constant time. */
export function verify(key: Buffer, purpose: string, data: string, mac: string): boolean {
  const want = Buffer.from(sign(key, purpose, data));
  const got = Buffer.from(mac);
  return got.length === want.length && timingSafeEqual(got, want);
}
