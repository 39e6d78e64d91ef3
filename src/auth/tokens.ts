import { hash, timingSafeEqual } from 'node:crypto';
import type { RandomIds } from '../crypto/random.ts';
import { SCOPES, type Scope } from './records.ts';

export { SCOPES, type Scope };

export const isScope = (s: string): s is Scope => (SCOPES as readonly string[]).includes(s);

/**
 * A token secret is `pst_<id>_<secret>`: the prefix makes a leaked token easy to spot
 * (and to grep for), the id finds its record without a scan, and 190 bits of secret make
 * a slow hash unnecessary, so only SHA-256 of the whole string is stored.
 */
const TOKEN_RE = /^pst_([A-Za-z0-9]{8})_([A-Za-z0-9]{32})$/;

export function newTokenSecret(ids: RandomIds): { id: string; secret: string } {
  const id = ids.base62(8);
  return { id, secret: `pst_${id}_${ids.base62(32)}` };
}

export const hashToken = (secret: string): string => hash('sha256', secret, 'hex');

/** The record id a presented secret claims, or null when it is not shaped like one of ours. */
export function tokenIdOf(secret: string): string | null {
  return TOKEN_RE.exec(secret)?.[1] ?? null;
}

/** Where tokenMatches puts the two digests it compares: every call fills both whole, at once. */
const DIGEST_HEX_CHARS = 64;
const presented = Buffer.alloc(DIGEST_HEX_CHARS);
const stored = Buffer.alloc(DIGEST_HEX_CHARS);
const STORED_HASH_RE = /^[0-9a-f]{64}$/;

/**
 * Constant-time comparison of a presented secret against a stored hash. Both hex digests
 * are compared as bytes (their latin1 encoding), written into two buffers made once:
 * `hash(..., 'buffer')` costs more than the hex digest does, and two new buffers per call
 * more still, on every API request (measured: see bench/README.md).
 */
export function tokenMatches(secret: string, storedHash: string): boolean {
  // A stored hash of any other shape (a hand-edited file) matches nothing.
  if (!STORED_HASH_RE.test(storedHash)) return false;
  presented.write(hashToken(secret), 0, 'latin1');
  stored.write(storedHash, 0, 'latin1');
  return timingSafeEqual(presented, stored);
}

/** A well-formed secret's length: `pst_`, the 8-character id, `_`, the 32-character secret. */
const SECRET_CHARS = 45;
/** Where sameSecret encodes a presented secret: room for any 45 UTF-16 units as UTF-8. */
const encoded = Buffer.alloc(SECRET_CHARS * 3);
const encodedHead = encoded.subarray(0, SECRET_CHARS);

/**
 * A secret that matched, as bytes to compare later ones against with sameSecret; null for
 * a string that cannot be one of ours (its length, or a character outside ASCII).
 */
export function secretBytes(secret: string): Buffer | null {
  const ours = secret.length === SECRET_CHARS && encoded.write(secret, 0, 'utf8') === SECRET_CHARS;
  // Memory of its own (not a slice of Node's shared pool), which goes when the holder does.
  const kept = ours ? Buffer.allocUnsafeSlow(SECRET_CHARS) : null;
  if (kept !== null) encodedHead.copy(kept);
  encoded.fill(0);
  return kept;
}

/**
 * Constant-time: whether a presented secret is the one `known` holds (from secretBytes).
 * Only a 45-character string encoding to 45 bytes (all ASCII) can be, so a character
 * outside ASCII never passes for the byte it would be cut to.
 */
export function sameSecret(secret: string, known: Buffer): boolean {
  const same =
    secret.length === SECRET_CHARS &&
    encoded.write(secret, 0, 'utf8') === SECRET_CHARS &&
    timingSafeEqual(encodedHead, known);
  // The scratch buffer keeps no presented secret between calls.
  encoded.fill(0);
  return same;
}

/** A scope check where `admin` is the wildcard (README, API). */
export const hasScope = (scopes: readonly Scope[], need: Scope): boolean =>
  scopes.includes(need) || scopes.includes('admin');
