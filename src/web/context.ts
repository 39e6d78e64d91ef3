import type { Accounts } from '../auth/accounts.ts';
import type { Authenticator } from '../auth/authenticate.ts';
import type { Config } from '../config.ts';
import type { Fields } from '../http/fields.ts';
import type { Reply } from '../http/reply.ts';
import type { PasteService } from '../paste/service.ts';
import type { RequestContext } from '../pipeline/context.ts';
import type { RateLimiter } from '../ratelimit/bucket.ts';
import type { User } from '../store/accounts.ts';
import type { Chrome } from './layout.ts';
import type { Session } from '../store/sessions.ts';
import type { SessionRecords } from './session.ts';

/** What the web side needs, built once by server.ts. */
export interface WebDeps {
  config: Pick<Config, 'baseUrl' | 'maxPasteBytes' | 'openRegistration' | 'sessionIdleMs'>;
  /** The API log's folder, for the admin's API Logs page. */
  logDir: string;
  /** Signs what the web hands out without storing it (server-key.ts). */
  serverKey: Buffer;
  accounts: Accounts;
  authenticator: Pick<Authenticator, 'login'>;
  sessions: SessionRecords;
  pastes: PasteService;
  /** When each token was last used, for the token lists. */
  tokenUsage: { get(tokenId: string): number | undefined };
  /** Registrations per address. */
  limiter: Pick<RateLimiter, 'consume'>;
  now: () => number;
  /** Where unexpected faults go: the server's own log, never the visitor. */
  logError: (err: unknown) => void;
}

/**
 * A web request as its steps fill it in, and what a page handler gets: who is asking, the
 * route's parameters, the query, and the parsed, CSRF-checked form.
 */
export interface WebContext extends RequestContext, Chrome {
  deps: WebDeps;
  route: WebRoute | null;
  params: Readonly<Record<string, string>>;
  /** The query string, read leniently (see parseUrlEncodedLenient). */
  query: Fields;
  /** The POST body (form-urlencoded); empty for GET. Its CSRF token was already checked. */
  form: Fields;
  /** The request's cookies, by name. */
  cookies: ReadonlyMap<string, string>;
  /** Cookies set now must be Secure (and `__Host-` named): the public address is https. */
  secure: boolean;
  session: Session | null;
  /** The anonymous double-submit CSRF token this request brought, if it is one we signed. */
  anonCsrf: string | undefined;
}

export type WebHandler = (ctx: WebContext) => Promise<Reply>;

/** A route's handler and who may reach it: anyone, logged-in users, or admins. */
export interface WebRoute {
  handler: WebHandler;
  access?: 'user' | 'admin';
}

/** A string field of a form or query, '' when absent or not a string. */
export function field(fields: Fields, name: string): string {
  const v = Object.hasOwn(fields, name) ? fields[name] : undefined;
  return typeof v === 'string' ? v : '';
}

/** The logged-in user of a route declared `access: 'user'` (the access step guarantees it). */
export function userOf(ctx: WebContext): User {
  if (ctx.user === null) throw new Error('route needs a user but was reached without one');
  return ctx.user;
}
