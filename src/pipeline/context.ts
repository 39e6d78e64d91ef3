import type { IncomingMessage } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { Viewer } from '../auth/viewer.ts';
import type { Headers } from '../http/reply.ts';

/**
 * What every request has, built once by app.ts before a side takes it: the request line
 * taken apart, the client, and what the answer will carry whatever it turns out to be.
 * Each side extends it with what its steps fill in (route, principal or session, body).
 */
export interface RequestContext {
  readonly req: IncomingMessage;
  readonly method: string;
  /** The path, without the query string. */
  readonly path: string;
  /** The query string as sent, without the `?`. */
  readonly rawQuery: string;
  /** The client's address (http/client-ip.ts). */
  readonly ip: string;
  /** When the request reached the app (performance.now()), for the log's duration. */
  readonly started: number;
  /** Headers the answer carries whatever it is (security, rate limit); a reply's own win. */
  readonly headers: Headers;
  /** Set-Cookie values that go out with whatever the answer is. */
  readonly setCookies: string[];
  /** Who is asking, as the paste rules see it; null for nobody (or before a side knows). */
  viewer: Viewer | null;
}

/** The common context of a request whose path and query were split by the caller. */
export function requestContext(req: IncomingMessage, path: string, rawQuery: string, ip: string, headers: Headers): RequestContext {
  return { req, method: req.method ?? 'GET', path, rawQuery, ip, started: performance.now(), headers, setCookies: [], viewer: null };
}
