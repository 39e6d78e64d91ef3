/**
 * The envelope of a paste its client encrypted (README, Encrypted pastes): one JSON object,
 *
 *   {"v":1,"alg":"AES-256-GCM","iv":"<12 bytes>","ct":"<ciphertext, then its 16-byte tag>"}
 *
 * and, when a password was used, also `"kdf":"PBKDF2-SHA-256","iter":<n>,"salt":"<16 bytes>"`.
 * Bytes are base64url without padding. The server checks this shape and nothing more
 * (`envelopeProblem`); encrypting and decrypting are the client's (envelope-crypto.ts). No
 * Node API here: the browser runs this module too.
 */

export const ENVELOPE_VERSION = 1;
export const ENVELOPE_ALG = 'AES-256-GCM';
export const ENVELOPE_KDF = 'PBKDF2-SHA-256';
/** What clients use: OWASP's 2023 figure for PBKDF2-HMAC-SHA-256. */
export const PBKDF2_ITERATIONS = 600_000;
/** The counts an envelope may name: fewer is too weak, more would hold a reader's browser for minutes. */
export const MIN_ITERATIONS = 100_000;
export const MAX_ITERATIONS = 10_000_000;
export const KEY_BYTES = 32;
export const IV_BYTES = 12;
export const SALT_BYTES = 16;
export const TAG_BYTES = 16;

/** An envelope's fields, its bytes still base64url. */
export interface Envelope {
  v: 1;
  alg: typeof ENVELOPE_ALG;
  iv: string;
  ct: string;
  kdf?: typeof ENVELOPE_KDF;
  iter?: number;
  salt?: string;
}

const B64URL = /^[A-Za-z0-9_-]*$/;

/** Characters of unpadded base64url that `n` bytes take. */
export const base64urlLength = (n: number): number => Math.ceil((n * 4) / 3);

/**
 * The most a file's head may take in its plaintext: the JSON of its name, type and size and
 * the newline (docs/encrypted-pastes.md, Files). A 255-byte name of `"` or `\` fits escaped;
 * one of control characters (six bytes each escaped) may not.
 */
export const MAX_FILE_HEAD_BYTES = 1024;

/**
 * The characters of the envelope envelope-crypto.ts makes of `plainBytes` bytes, with a
 * password made with `iter` rounds or without: its fields in the order it writes them.
 */
export function envelopeLength(plainBytes: number, password?: { iter: number }): number {
  const fixed: Record<string, unknown> = {
    v: ENVELOPE_VERSION,
    alg: ENVELOPE_ALG,
    iv: 'x'.repeat(base64urlLength(IV_BYTES)),
    ct: '',
  };
  if (password !== undefined)
    Object.assign(fixed, { kdf: ENVELOPE_KDF, iter: password.iter, salt: 'x'.repeat(base64urlLength(SALT_BYTES)) });
  return JSON.stringify(fixed).length + base64urlLength(plainBytes + TAG_BYTES);
}

/**
 * The largest envelope of a file of `fileBytes` bytes: the longest head, with a password of
 * the highest count an envelope may name. What the server takes for an encrypted paste's file.
 */
export const sealedFileBytes = (fileBytes: number): number =>
  envelopeLength(MAX_FILE_HEAD_BYTES + fileBytes, { iter: MAX_ITERATIONS });

const PLAIN_KEYS = ['alg', 'ct', 'iv', 'v'];
const PASSWORD_KEYS = ['alg', 'ct', 'iter', 'iv', 'kdf', 'salt', 'v'];

/** Why `text` is not an envelope this server keeps, or null when it is one. */
export function envelopeProblem(text: string): string | null {
  const parsed = readEnvelope(text);
  return typeof parsed === 'string' ? parsed : null;
}

/** The envelope in `text`, or what is wrong with it. */
export function readEnvelope(text: string): Envelope | string {
  let o: unknown;
  try {
    o = JSON.parse(text);
  } catch {
    // JSON.parse of a string throws SyntaxError only.
    return 'content must be an encryption envelope (a JSON object), since encrypted=1';
  }
  if (typeof o !== 'object' || o === null || Array.isArray(o)) return 'the encryption envelope must be a JSON object';
  const f = o as Record<string, unknown>;
  if (f['v'] !== ENVELOPE_VERSION) return `the encryption envelope's version must be ${ENVELOPE_VERSION}`;
  const keys = Object.keys(f).sort().join();
  if (keys !== PLAIN_KEYS.join() && keys !== PASSWORD_KEYS.join())
    return `the encryption envelope must hold exactly ${PLAIN_KEYS.join(', ')} (and kdf, iter, salt with a password)`;
  if (f['alg'] !== ENVELOPE_ALG) return `the encryption envelope's alg must be ${ENVELOPE_ALG}`;
  if (!isBytes(f['iv'], IV_BYTES, IV_BYTES))
    return `the encryption envelope's iv must be ${IV_BYTES} bytes of base64url`;
  if (!isBytes(f['ct'], TAG_BYTES, Number.POSITIVE_INFINITY))
    return `the encryption envelope's ct must be base64url of at least ${TAG_BYTES} bytes`;
  if (keys === PASSWORD_KEYS.join()) {
    if (f['kdf'] !== ENVELOPE_KDF) return `the encryption envelope's kdf must be ${ENVELOPE_KDF}`;
    const iter = f['iter'];
    if (!Number.isInteger(iter) || (iter as number) < MIN_ITERATIONS || (iter as number) > MAX_ITERATIONS)
      return `the encryption envelope's iter must be a whole number from ${MIN_ITERATIONS} to ${MAX_ITERATIONS}`;
    if (!isBytes(f['salt'], SALT_BYTES, SALT_BYTES))
      return `the encryption envelope's salt must be ${SALT_BYTES} bytes of base64url`;
  }
  return f as unknown as Envelope;
}

/** Whether `v` is unpadded base64url of `min` to `max` bytes. */
function isBytes(v: unknown, min: number, max: number): boolean {
  if (typeof v !== 'string' || !B64URL.test(v) || v.length % 4 === 1) return false;
  const bytes = Math.floor((v.length * 3) / 4);
  return bytes >= min && bytes <= max;
}

/** Bytes as unpadded base64url. */
export function toBase64url(bytes: Uint8Array): string {
  let s = '';
  // In slices: String.fromCharCode takes its arguments on the stack.
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** The bytes of unpadded base64url (already checked by `readEnvelope`, or a key to check by length). */
export function fromBase64url(s: string): Uint8Array {
  const bin = atob(s.replace(/-/g, '+').replace(/_/g, '/'));
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}
