import type { IncomingMessage } from 'node:http';
import type { Headers, Reply } from './reply.ts';

/**
 * Cross-origin access to the API (README, CORS), for the origins CORS_ORIGINS lists (or
 * any, with `*`). Never with credentials: API requests carry their token in a header,
 * and the web's cookies stay same-origin. An origin not listed gets no CORS header at all,
 * so the browser keeps the answer from its page.
 */

/** The request headers a page may send (all the API reads). */
const ALLOWED_HEADERS =
  'Authorization, Content-Type, Idempotency-Key, If-Match, If-None-Match, X-Paste-Password, X-Request-Id';
/** The answer headers a page may read, beyond the few every browser shows. */
const EXPOSED_HEADERS = 'ETag, X-Request-Id, Retry-After, X-RateLimit-Limit, X-RateLimit-Remaining';
const ALLOWED_METHODS = 'GET, HEAD, POST';
/** How long a browser may keep a preflight's answer, in seconds. */
const MAX_AGE = '600';

export class Cors {
  readonly #any: boolean;
  readonly #origins: ReadonlySet<string>;

  constructor(origins: readonly string[]) {
    this.#any = origins.includes('*');
    this.#origins = new Set(origins);
  }

  /** Whether every origin is allowed (`*`). */
  get allowsAny(): boolean {
    return this.#any;
  }

  /** The Access-Control-Allow-Origin value for a request's Origin, or null when it is not allowed. */
  allowed(origin: string | undefined): string | null {
    if (origin === undefined) return null;
    if (this.#any) return '*';
    return this.#origins.has(origin) ? origin : null;
  }

  /**
   * Adds to an answer's headers what a page of an allowed origin needs to read it. Every
   * answer varies by Origin (but with `*`), so a cache never hands one origin's to another.
   */
  decorate(req: IncomingMessage, headers: Headers): void {
    if (!this.#any) headers['vary'] = 'Origin';
    const allow = this.allowed(req.headers.origin);
    if (allow === null) return;
    headers['access-control-allow-origin'] = allow;
    headers['access-control-expose-headers'] = EXPOSED_HEADERS;
  }

  /** Whether a request is a browser's preflight: OPTIONS with the method it asks about. */
  static isPreflight(req: IncomingMessage): boolean {
    return req.method === 'OPTIONS' && req.headers['access-control-request-method'] !== undefined;
  }

  /** The answer to a preflight: 204, with the methods and headers allowed when its origin is. */
  preflight(req: IncomingMessage): Reply {
    const headers: Headers = {};
    if (this.allowed(req.headers.origin) !== null) {
      headers['access-control-allow-methods'] = ALLOWED_METHODS;
      headers['access-control-allow-headers'] = ALLOWED_HEADERS;
      headers['access-control-max-age'] = MAX_AGE;
    }
    return { kind: 'text', status: 204, body: '', headers };
  }
}
