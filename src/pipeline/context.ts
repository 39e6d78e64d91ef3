import type { IncomingMessage } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { Viewer } from '../paste/access.ts';
import type { Headers } from '../http/reply.ts';
import type { Upload } from '../http/multipart.ts';

/**
 * What every request has, from the moment app.ts hands it to a side: the request line
 * taken apart, the client, and what the answer will carry whatever it turns out to be.
 * Each side's context extends it with what its steps fill in (route, principal or session,
 * body). A class, so that every context of a side has one shape: the hot read path makes
 * one per request.
 */
export class RequestContext {
  readonly method: string;
  /** When the request reached the app (performance.now()), for the log's duration. */
  readonly started = performance.now();
  /** Headers the answer carries whatever it is (security, rate limit); a reply's own win. */
  readonly headers: Headers;
  /** Set-Cookie values that go out with whatever the answer is. */
  readonly setCookies: string[] = [];
  /** Who is asking, as the paste rules see it; null for nobody (or before a side knows). */
  viewer: Viewer | null = null;
  /** The matched route's pattern (`/p/:hash`), a bounded label for metrics; 'unmatched' before or without one. */
  pattern = 'unmatched';
  /** The files a multipart body brought, spooled until the request is answered (pipeline/run.ts removes them). */
  uploads: Upload[] = [];

  constructor(
    readonly req: IncomingMessage,
    /** The path, without the query string. */
    readonly path: string,
    /** The query string as sent, without the `?`. */
    readonly rawQuery: string,
    /** The client's address (http/client-ip.ts). */
    readonly ip: string,
    /** The key its per-IP budgets are kept under: the address, an IPv6 one as its network (http/client-ip.ts). */
    readonly clientKey: string,
    /** The request's id (http/request-id.ts); the side's headers carry it as `x-request-id`. */
    readonly id: string,
    /** The side's own headers for every answer, as a literal: one shape per side. */
    headers: Headers,
  ) {
    this.method = req.method ?? 'GET';
    this.headers = headers;
  }
}
