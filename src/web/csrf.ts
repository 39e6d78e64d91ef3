import { timingSafeEqual } from 'node:crypto';
import { RandomIds } from '../crypto/random.ts';
import { hostCookieName, serializeCookie } from '../http/cookies.ts';
import type { Signer } from '../crypto/signature.ts';

/** The hidden form field every state-changing form carries. */
export const CSRF_FIELD = '_csrf';

/**
 * Visitors without a session (log in, register, a burn or password form) get a
 * double-submit token instead: a value in a SameSite=Lax cookie that the form repeats.
 * Another site can neither read the cookie nor make the browser send it along with a
 * cross-site POST, so it cannot produce a matching pair. The value is a random nonce
 * signed with the server key, so a cookie planted with a value of the attacker's choosing
 * is never accepted; over https the `__Host-` name keeps sibling hosts from planting one.
 */
export const ANON_CSRF_COOKIE = 'paste_csrf';

export const anonCsrfCookieName = (secure: boolean): string => hostCookieName(ANON_CSRF_COOKIE, secure);

const ANON_COOKIE_MAX_AGE_S = 7 * 86_400;
const ANON_PURPOSE = 'anon-csrf';
/** A session's token: 32 random bytes in base64url. */
const TOKEN_RE = /^[A-Za-z0-9_-]{43}$/;
/** An anonymous token: a nonce like the above, a dot, and its HMAC-SHA256 in base64url. */
const ANON_RE = /^([A-Za-z0-9_-]{43})\.([A-Za-z0-9_-]{43})$/;

/** Nonces come from a pooled draw: a CSPRNG call per token showed in a burn warning page's profile. */
const nonces = new RandomIds();

export const newCsrfToken = (): string => nonces.base64url(32);

export const isCsrfToken = (s: string): boolean => TOKEN_RE.test(s) || ANON_RE.test(s);

/** A fresh anonymous token, signed with the server key. */
export function newAnonCsrfToken(signer: Signer): string {
  const nonce = newCsrfToken();
  return `${nonce}.${signer.sign(ANON_PURPOSE, nonce)}`;
}

/** Whether a presented anonymous token is one this server issued. */
export function isAnonCsrfToken(signer: Signer, token: string): boolean {
  const m = ANON_RE.exec(token);
  return m !== null && signer.verify(ANON_PURPOSE, m[1] as string, m[2] as string);
}

/** Constant-time comparison; anything not shaped like one of our tokens never matches. */
export function csrfMatches(expected: string, given: string): boolean {
  if (!isCsrfToken(expected)) return false;
  const a = Buffer.from(expected);
  const b = Buffer.from(given);
  return a.length === b.length && timingSafeEqual(a, b);
}

export function anonCsrfCookie(token: string, secure: boolean): string {
  return serializeCookie(anonCsrfCookieName(secure), token, {
    maxAge: ANON_COOKIE_MAX_AGE_S,
    httpOnly: true,
    secure,
    sameSite: 'Lax',
  });
}
