import { randomBytes } from 'node:crypto';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** Paste hashes: 10 base62 characters. The first 6 are the paste's shortcode. */
export const HASH_RE = /^[A-Za-z0-9]{10}$/;
export const SHORTCODE_RE = /^[A-Za-z0-9]{6}$/;
export const SHORTCODE_LENGTH = 6;

/**
 * Random bytes from the CSPRNG, drawn 4 KiB at a time: one call per id cost more than the
 * rest of id generation. Each byte is handed out once.
 */
let pool = Buffer.alloc(0);
let poolAt = 0;
function pooledRandom(n: number): Buffer {
  if (poolAt + n > pool.length) {
    pool = randomBytes(Math.max(4096, n));
    poolAt = 0;
  }
  poolAt += n;
  return pool.subarray(poolAt - n, poolAt);
}

/**
 * A random base62 string from the CSPRNG. Bytes >= 248 are rejected rather than
 * reduced modulo 62, which would make the first 8 letters slightly more likely.
 */
export function randomBase62(length: number, random: (n: number) => Buffer = pooledRandom): string {
  let out = '';
  while (out.length < length) {
    for (const byte of random(length * 2)) {
      if (byte < 248) out += ALPHABET[byte % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

export const shortcodeOf = (hash: string): string => hash.slice(0, SHORTCODE_LENGTH);
