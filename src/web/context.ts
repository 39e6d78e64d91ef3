import type { IncomingMessage } from 'node:http';
import type { AppDeps } from '../deps.ts';
import type { Fields } from '../http/fields.ts';
import type { Reply } from '../http/reply.ts';
import type { Viewer } from '../paste/service.ts';
import type { User } from '../store/accounts.ts';
import type { Session } from '../store/sessions.ts';
import type { Chrome } from './layout.ts';

/** What a web handler gets: the request, who is asking, and the parsed, CSRF-checked form. */
export interface WebContext extends Chrome {
  deps: AppDeps;
  req: IncomingMessage;
  method: string;
  params: Record<string, string>;
  /** The query string, read leniently (see parseUrlEncodedLenient). */
  query: Fields;
  /** The POST body (form-urlencoded); empty for GET. Its CSRF token was already checked. */
  form: Fields;
  /** The request's cookies, by name. */
  cookies: ReadonlyMap<string, string>;
  /** Cookies set now must be Secure (and `__Host-` named): the public address is https. */
  secure: boolean;
  ip: string;
  session: Session | null;
  /** The paste-rules view of the logged-in user, null for an anonymous visitor. */
  viewer: Viewer | null;
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

/** The logged-in user of a route declared `access: 'user'` (the pipeline guarantees it). */
export function userOf(ctx: WebContext): User {
  if (ctx.user === null) throw new Error('route needs a user but was reached without one');
  return ctx.user;
}
