import type { IncomingMessage } from 'node:http';

/**
 * Reads the Cookie header into a map. Values are taken verbatim (we only ever set
 * base64url values, so no decoding is needed); a malformed pair is skipped, and the first
 * occurrence of a name wins, as RFC 6265 §5.4 orders the more specific cookie first.
 */
export function parseCookies(req: IncomingMessage): Map<string, string> {
  const out = new Map<string, string>();
  const header = req.headers.cookie;
  if (header === undefined) return out;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq === -1) continue;
    const name = part.slice(0, eq).trim();
    let value = part.slice(eq + 1).trim();
    if (value.startsWith('"') && value.endsWith('"') && value.length >= 2) value = value.slice(1, -1);
    if (name !== '' && !out.has(name)) out.set(name, value);
  }
  return out;
}

export interface CookieOptions {
  /** Seconds; 0 deletes the cookie; omitted makes a browser-session cookie. */
  maxAge?: number;
  httpOnly?: boolean;
  secure?: boolean;
  sameSite?: 'Lax' | 'Strict';
}

const TOKEN_RE = /^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/;
const VALUE_RE = /^[A-Za-z0-9!#$%&'()*+./:<=>?@[\]^_`{|}~-]*$/;

const HOST_PREFIX = '__Host-';

/**
 * The name to use for one of our cookies: with the `__Host-` prefix when cookies are Secure,
 * so browsers accept it only from this exact origin over https, with Path=/ and no Domain
 * (RFC 6265bis §4.1.3.2); a sibling subdomain or a network attacker cannot plant one.
 */
export const hostCookieName = (name: string, secure: boolean): string => (secure ? HOST_PREFIX + name : name);

/**
 * A Set-Cookie header value, always with `Path=/` and never a Domain. Refuses names and
 * values that need quoting, and a `__Host-` cookie without Secure (browsers would drop it).
 */
export function serializeCookie(name: string, value: string, opts: CookieOptions = {}): string {
  if (!TOKEN_RE.test(name)) throw new TypeError(`invalid cookie name ${name}`);
  if (!VALUE_RE.test(value)) throw new TypeError(`invalid cookie value for ${name}`);
  if (name.startsWith(HOST_PREFIX) && opts.secure !== true) throw new TypeError(`${name} must be Secure`);
  let out = `${name}=${value}; Path=/`;
  if (opts.maxAge !== undefined) out += `; Max-Age=${Math.max(0, Math.floor(opts.maxAge))}`;
  if (opts.httpOnly) out += '; HttpOnly';
  if (opts.secure) out += '; Secure';
  if (opts.sameSite !== undefined) out += `; SameSite=${opts.sameSite}`;
  return out;
}
