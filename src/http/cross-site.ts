import type { IncomingMessage } from 'node:http';
import type { Cors } from './cors.ts';

/**
 * Whether a browser says a request comes from a page of another site (README, Anonymous
 * pastes): its `Origin` is neither one of `ours` (http/site-origins.ts) nor one CORS_ORIGINS allows,
 * or, without an `Origin`, its `Sec-Fetch-Site` is `cross-site`. A request with neither
 * header (curl, a script) comes from no page, and is not cross-site.
 */
export function fromOtherSite(req: IncomingMessage, ours: ReadonlySet<string>, cors: Cors | null): boolean {
  const origin = req.headers.origin;
  if (origin !== undefined) return !ours.has(origin) && (cors === null || cors.allowed(origin) === null);
  return req.headers['sec-fetch-site'] === 'cross-site' && !(cors?.allowsAny ?? false);
}
