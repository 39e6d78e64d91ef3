import { randomBytes } from 'node:crypto';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const POOL_BYTES = 4096;

/**
 * Random base62 ids from the CSPRNG, for paste hashes, token ids and temp file names, and
 * base64url nonces.
 * Bytes are drawn 4 KiB at a time (one call per id cost more than the rest of id
 * generation) and each byte is handed out once. Every owner of ids holds its own pool.
 */
export class RandomIds {
  #pool: Buffer = Buffer.alloc(0);
  #at = 0;

  /** `source` stands in for the CSPRNG in tests. */
  constructor(private readonly source: (n: number) => Buffer = randomBytes) {}

  /**
   * A random string of `length` base62 characters. Bytes >= 248 are rejected rather than
   * reduced modulo 62, which would make the first 8 letters slightly more likely.
   */
  base62(length: number): string {
    let out = '';
    while (out.length < length) {
      for (const byte of this.#bytes(length * 2)) {
        if (byte < 248) out += ALPHABET[byte % 62];
        if (out.length === length) break;
      }
    }
    return out;
  }

  /** `n` random bytes in base64url (a secret: a CSRF token's nonce), from the same pool. */
  base64url(n: number): string {
    return this.#bytes(n).toString('base64url');
  }

  #bytes(n: number): Buffer {
    if (this.#at + n > this.#pool.length) {
      this.#pool = this.source(Math.max(POOL_BYTES, n));
      this.#at = 0;
    }
    this.#at += n;
    return this.#pool.subarray(this.#at - n, this.#at);
  }
}
