import type { IncomingMessage } from 'node:http';

/**
 * The client's address. Behind a reverse proxy (TRUST_PROXY=1) it is the last hop of
 * X-Forwarded-For, the one our own proxy appended; earlier hops are client-supplied.
 */
export function clientIp(req: IncomingMessage, trustProxy: boolean): string {
  if (trustProxy) {
    const xff = req.headers['x-forwarded-for'];
    const last = (Array.isArray(xff) ? xff.join(',') : xff)?.split(',').at(-1)?.trim();
    if (last) return normalize(last);
  }
  return normalize(req.socket.remoteAddress ?? '');
}

const normalize = (ip: string): string => (ip.startsWith('::ffff:') ? ip.slice(7) : ip);
