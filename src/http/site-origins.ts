import { isIPv6 } from 'node:net';

/** Host names that reach this machine itself, as a browser writes them in an origin. */
const LOOPBACK = ['localhost', '127.0.0.1', '[::1]'];

/**
 * The origins that are this site: BASE_URL's; with BASE_URL unset (the laptop default,
 * `http://localhost:PORT`), every loopback spelling of the same port too, so the address
 * the server logs at start (`http://127.0.0.1:PORT`) is one a sign-in form works from.
 */
export function siteOrigins(baseUrl: string, loopbackToo: boolean): ReadonlySet<string> {
  const ours = new URL(baseUrl);
  const origins = new Set([ours.origin]);
  if (loopbackToo)
    for (const host of LOOPBACK) {
      const alias = new URL(ours.origin);
      alias.hostname = host;
      origins.add(alias.origin);
    }
  return origins;
}

/**
 * The address a server listening on `host` and `port` is reached at, for its log: an IPv6 host in brackets (RFC 3986).
 */
export const listenUrl = (host: string, port: number): string => `http://${isIPv6(host) ? `[${host}]` : host}:${port}`;
