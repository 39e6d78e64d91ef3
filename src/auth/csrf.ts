import { randomBytes, timingSafeEqual } from 'node:crypto';
import { serializeCookie } from '../http/cookies.ts';

/** The hidden form field every state-changing form carries. */
export const CSRF_FIELD = '_csrf';

/**
 * Visitors without a session (log in, register, a burn or password form) get a
 * double-submit token instead: a random value in a SameSite=Lax cookie that the form
 * repeats. Another site can neither read the cookie nor make the browser send it along
 * with a cross-site POST, so it cannot produce a matching pair.
 */
export const ANON_CSRF_COOKIE = 'paste_csrf';

const ANON_COOKIE_MAX_AGE_S = 7 * 86_400;
const TOKEN_RE = /^[A-Za-z0-9_-]{43}$/;

export const newCsrfToken = (): string => randomBytes(32).toString('base64url');

export const isCsrfToken = (s: string): boolean => TOKEN_RE.test(s);

/** Constant-time comparison; anything not shaped like one of our tokens never matches. */
export function csrfMatches(expected: string, given: string): boolean {
  if (!isCsrfToken(expected) || !isCsrfToken(given)) return false;
  return timingSafeEqual(Buffer.from(expected), Buffer.from(given));
}

export function anonCsrfCookie(token: string, secure: boolean): string {
  return serializeCookie(ANON_CSRF_COOKIE, token, { maxAge: ANON_COOKIE_MAX_AGE_S, httpOnly: true, secure, sameSite: 'Lax' });
}
