import type { LogPage, LogQuery } from '../log/reader.ts';
import type { IncomingMessage } from 'node:http';
import type { Accounts } from '../auth/accounts.ts';
import type { Authenticator } from '../auth/authenticate.ts';
import type { Config, FileLimits } from '../config.ts';
import type { Signer } from '../crypto/signature.ts';
import type { Actor, AuditLog } from '../log/audit.ts';
import type { BodyBudget } from '../http/body-budget.ts';
import { parseCookies } from '../http/cookies.ts';
import { NO_FIELDS, parseUrlEncodedLenient, type Fields } from '../http/fields.ts';
import type { Reply } from '../http/reply.ts';
import type { AnonymousDoor } from '../paste/anonymous.ts';
import type { PasteService } from '../paste/service.ts';
import { RequestContext } from '../pipeline/context.ts';
import type { FaultLog } from '../pipeline/run.ts';
import type { Limiter } from '../ratelimit/limiter.ts';
import type { TokenRecord, User } from '../auth/records.ts';
import { anonCsrfCookie, anonCsrfCookieName, isAnonCsrfToken, newAnonCsrfToken } from './csrf.ts';
import { webHeaders, type Chrome } from './layout.ts';
import type { OidcClient } from './oidc-client.ts';
import type { PageParts } from './page-parts.ts';
import type { ShownOnce } from './shown-once.ts';
import type { TimeTags } from './time.ts';
import type { Session, SessionRecords } from '../auth/sessions.ts';

/** What the web side needs, built once by server.ts. */
export interface WebDeps {
  config: Pick<
    Config,
    | 'baseUrl'
    | 'baseUrlDefault'
    | 'maxPasteBytes'
    | 'openRegistration'
    | 'sessionIdleMs'
    | 'defaultTokenRatePerMinute'
    | 'authProxy'
    | 'markdownRemoteImages'
    | 'oidc'
  >;
  /** Bytes for forms sent without a session (README, Security and durability). */
  preAuth: BodyBudget;
  /** Where uploaded files are spooled, and the files' limits (README, Files). */
  files: { tmpDir: string; limits: FileLimits };
  /** The API log, for the admins' API Logs page. */
  apiLog: { read(query: LogQuery): Promise<LogPage> };
  /** New token secrets, held for the one page that shows them (shown-once.ts). */
  shownOnce: ShownOnce<{ record: TokenRecord; secret: string }>;
  /** A new or reset user's temporary password, held for the one page that shows it. */
  shownPasswords: ShownOnce<{ name: string; password: string; reset?: boolean }>;
  /** The admins' record, for the Audit page (README, Audit log). */
  audit: Pick<AuditLog, 'read'>;
  /** The paste page's costly parts, made once per paste version (page-parts.ts). */
  parts: PageParts;
  /** Signs what the web hands out without storing it, with the server key (server-key.ts). */
  signer: Signer;
  /** The `<time>` elements of the moments pages show (time.ts). */
  times: TimeTags;
  accounts: Accounts;
  authenticator: Pick<Authenticator, 'login'>;
  sessions: SessionRecords;
  pastes: PasteService;
  /** Creates without an account (ANONYMOUS_PASTES); null: only users create. */
  anonymous: AnonymousDoor | null;
  /** When each token was last used, for the token lists. */
  tokenUsage: {
    get(tokenId: string): number | undefined;
    ip(tokenId: string): string | undefined;
    lastDay(tokenId: string, now: number): number;
  };
  /** Registrations per address. */
  limiter: Pick<Limiter, 'consume'>;
  now: () => number;
  /** Where unexpected faults go: the server's own log, never the visitor. */
  logError: FaultLog;
  /** Sign-in with OpenID Connect (OIDC_ISSUER); null: off, and openid-client is never loaded. */
  oidc: OidcClient | null;
  /** What the operator should know (a proxy header from an address not trusted): the server's log. */
  warn: (message: string) => void;
}

/**
 * A web request as its steps fill it in, and what a page handler gets: who is asking, the
 * route's parameters, the query, and the parsed, CSRF-checked form.
 */
export class WebContext extends RequestContext implements Chrome {
  route: WebRoute | null = null;
  params: Readonly<Record<string, string>> = NO_PARAMS;
  /** The query string, read leniently (see parseUrlEncodedLenient). */
  readonly query: Fields;
  /** The POST body (form-urlencoded); empty for GET. Its CSRF token was already checked. */
  form: Fields = NO_FIELDS;
  /** Why a multipart form was refused while it was read (a file past MAX_FILE_BYTES): the form shows it. */
  uploadRefused: string | null = null;
  /** The request's cookies, by name. */
  readonly cookies: ReadonlyMap<string, string>;
  session: Session | null = null;
  user: User | null = null;
  /** The anonymous double-submit CSRF token this request brought, if it is one we signed. */
  anonCsrf: string | undefined;

  constructor(
    readonly deps: WebDeps,
    /** Cookies set now must be Secure (and `__Host-` named): the public address is https. */
    readonly secure: boolean,
    req: IncomingMessage,
    path: string,
    rawQuery: string,
    ip: string,
    clientKey: string,
    id: string,
  ) {
    super(req, path, rawQuery, ip, clientKey, id, webHeaders(id));
    this.query = parseUrlEncodedLenient(this.rawQuery);
    this.cookies = parseCookies(this.req);
    const presented = this.cookies.get(anonCsrfCookieName(secure)) ?? '';
    // Only a token this server signed counts; a planted or stale one is as good as none.
    this.anonCsrf = isAnonCsrfToken(deps.signer, presented) ? presented : undefined;
  }

  /** The first account may always be made; later ones only with OPEN_REGISTRATION (README, Web pages). */
  registrationOpen(): boolean {
    return this.deps.config.openRegistration || this.deps.accounts.users.length === 0;
  }

  /**
   * The CSRF token for this page's forms: the session's own, else the visitor's
   * double-submit cookie, which is set only when a page shows a form.
   */
  csrf(): string {
    if (this.session !== null) return this.session.record.csrf;
    if (this.anonCsrf === undefined) {
      this.anonCsrf = newAnonCsrfToken(this.deps.signer);
      this.setCookies.push(anonCsrfCookie(this.anonCsrf, this.secure));
    }
    return this.anonCsrf;
  }
}

const NO_PARAMS: Readonly<Record<string, string>> = Object.freeze(Object.create(null) as Record<string, string>);

/** A page: its reply, at once when nothing had to wait (a cached paste), else a promise of it. */
export type WebHandler = (ctx: WebContext) => Reply | Promise<Reply>;

/** A route's handler and who may reach it: anyone, logged-in users, or admins. */
export interface WebRoute {
  handler: WebHandler;
  access?: 'user' | 'admin';
  /**
   * Reachable by a user whose password is temporary (the account page, logging out); every other page sends them there.
   */
  beforeNewPassword?: true;
  /** A `user` route that visitors may reach too when ANONYMOUS_PASTES is on (creating a paste). */
  anonymous?: true;
  /** Takes `multipart/form-data` with `file` parts as well as a plain form (README, Files). */
  files?: true;
}

/** Whether this visitor's forms may bring files: a user's, and a visitor's with ANONYMOUS_FILES (README, Files). */
export const takesFiles = (ctx: WebContext): boolean => ctx.user !== null || ctx.deps.files.limits.anonymousFiles;

/** A string field of a form or query, '' when absent or not a string. */
export function field(fields: Fields, name: string): string {
  const v = Object.hasOwn(fields, name) ? fields[name] : undefined;
  return typeof v === 'string' ? v : '';
}

/** The admin behind a web request, as the audit log names them. */
export function actorOf(ctx: WebContext): Actor {
  const u = userOf(ctx);
  return { via: 'web', user_id: u.id, name: u.name, ip: ctx.ip };
}

/** The logged-in user of a route declared `access: 'user'` (the access step guarantees it). */
export function userOf(ctx: WebContext): User {
  if (ctx.user === null) throw new Error('route needs a user but was reached without one');
  return ctx.user;
}

/** The session of a page that needs a user (only a session signs one in). */
export function sessionOf(ctx: WebContext): Session {
  if (ctx.session === null) throw new Error('route needs a session but was reached without one');
  return ctx.session;
}
