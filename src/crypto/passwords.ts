import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';

/** A salted slow hash, `scrypt$N$r$p$salt$key`, salt and key in base64url. Parameters travel with the hash. */
export type PasswordHash = string;

const N = 16_384;
const R = 8;
const P = 1;
const KEY_LEN = 32;

function derive(password: string, salt: Buffer, n: number, r: number, p: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFC'), salt, KEY_LEN, { N: n, r, p, maxmem: 64 * 1024 * 1024 }, (err, key) =>
      err ? reject(err) : resolve(key),
    );
  });
}

export async function hashPassword(password: string): Promise<PasswordHash> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, N, R, P);
  return ['scrypt', N, R, P, salt.toString('base64url'), key.toString('base64url')].join('$');
}

/** Whether `s` has the shape `hashPassword` gives (so a password in clear is never taken for one). */
export const isPasswordHash = (s: string): boolean =>
  /^scrypt\$[1-9]\d*\$[1-9]\d*\$[1-9]\d*\$[A-Za-z0-9_-]{16,}\$[A-Za-z0-9_-]{32,}$/.test(s);

/** Constant-time check; a malformed stored hash verifies nothing rather than throwing. */
export async function verifyPassword(password: string, stored: PasswordHash): Promise<boolean> {
  const [scheme, n, r, p, salt, key] = stored.split('$');
  if (scheme !== 'scrypt' || salt === undefined || key === undefined) return false;
  const expected = Buffer.from(key, 'base64url');
  const actual = await derive(password, Buffer.from(salt, 'base64url'), Number(n), Number(r), Number(p));
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}
