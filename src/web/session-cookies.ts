import { hostCookieName, serializeCookie } from '../http/cookies.ts';

/** The cookie that carries a login session id; `__Host-paste_sid` when cookies are Secure. */
export const SESSION_COOKIE = 'paste_sid';

export const sessionCookieName = (secure: boolean): string => hostCookieName(SESSION_COOKIE, secure);

/**
 * HttpOnly keeps the id from scripts; SameSite=Lax keeps it off cross-site POSTs (a second
 * line behind the CSRF tokens); Secure whenever the service is served over https.
 * Max-Age follows the idle limit, and is renewed whenever the session's last use is.
 */
export function sessionCookie(id: string, idleMs: number, secure: boolean): string {
  return serializeCookie(sessionCookieName(secure), id, {
    maxAge: idleMs / 1000,
    httpOnly: true,
    secure,
    sameSite: 'Lax',
  });
}

export function clearSessionCookie(secure: boolean): string {
  return serializeCookie(sessionCookieName(secure), '', { maxAge: 0, httpOnly: true, secure, sameSite: 'Lax' });
}

/** Cookies are marked Secure exactly when the public address is https. */
export const secureCookies = (baseUrl: string): boolean => baseUrl.startsWith('https:');
