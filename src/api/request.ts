import type { Signer } from '../crypto/signature.ts';
import type { IncomingMessage } from 'node:http';
import type { FileLimits } from '../config.ts';
import type { Upload } from '../http/multipart.ts';
import type { Authenticator } from '../auth/authenticate.ts';
import type { Principal } from '../auth/viewer.ts';
import type { Viewer } from '../paste/access.ts';
import type { BodyBudget } from '../http/body-budget.ts';
import type { Cors } from '../http/cors.ts';
import type { Fields } from '../http/fields.ts';
import type { Reply } from '../http/reply.ts';
import type { ApiLogEntry } from '../log/entry.ts';
import type { LineBudget } from '../log/line-budget.ts';
import type { AnonymousDoor } from '../paste/anonymous.ts';
import type { PasteService } from '../paste/service.ts';
import type { FaultLog } from '../pipeline/run.ts';
import type { Limiter } from '../ratelimit/limiter.ts';
import type { Scope, User } from '../auth/records.ts';
import type { ReadBodies } from './v1/bodies.ts';
import type { Idempotency } from './v1/idempotency.ts';

/** What the API side needs, built once by server.ts. */
export interface ApiDeps {
  baseUrl: string;
  /** BASE_URL unset: every loopback spelling of the port is this site too (http/site-origins.ts). */
  loopbackIsOurs?: boolean;
  maxPasteBytes: number;
  /** Where multipart uploads are spooled, and the files' limits (README, Files). */
  files: { tmpDir: string; limits: FileLimits };
  /** Bytes for bodies read to look for a token in them (README, Security and durability). */
  preAuth: BodyBudget;
  /** The accounts as they are now (`fresh`), and users' names for the paste's `owner`. */
  accounts: { fresh(): Promise<void>; user(id: number): User | undefined };
  authenticator: Pick<Authenticator, 'token' | 'current'>;
  limiter: Pick<Limiter, 'consume'>;
  pastes: PasteService;
  /** Cross-origin access (CORS_ORIGINS); null: same-origin only, and OPTIONS is a 405 like any other method. */
  cors: Cors | null;
  /** Creates without a token (ANONYMOUS_PASTES); null: every request needs one. */
  anonymous: AnonymousDoor | null;
  /** The read answers' rendered pieces, per paste version. */
  bodies: ReadBodies;
  /** Writes carried out once per Idempotency-Key. */
  idempotency: Idempotency;
  log: { append(entry: ApiLogEntry): void };
  /** Lines for requests no valid token pays for, per client (log/line-budget.ts). */
  logBudget: Pick<LineBudget, 'admit'>;
  now: () => number;
  /** Signs with the server key: a burned paste's file grants (paste/file-grant.ts). */
  signer: Signer;
  /** Where unexpected faults go: the server's own log, never the client. */
  logError: FaultLog;
}

/** What an endpoint's handler gets: an authenticated request whose query and body parsed. */
export interface ApiRequest {
  deps: ApiDeps;
  req: IncomingMessage;
  ip: string;
  /** The key the client's per-IP budgets are kept under (http/client-ip.ts). */
  clientKey: string;
  query: Fields;
  body: Fields;
  /** The path's parameters (`/documents/:key`). */
  params: Readonly<Record<string, string>>;
  principal: Principal;
  viewer: Viewer;
  /** The files a multipart body brought, spooled (removed after the handler, unless it kept them). */
  uploads: readonly Upload[];
}

/** An endpoint: the scope it needs and its handler (parse → domain → reply). */
export interface TokenRoute {
  scope: Scope;
  /** Takes a `text/plain` body as its `content`, the other fields from the query string (README, Create a paste). */
  text?: true;
  /**
   * Lets a request that carries no token at all through: `create` as an anonymous paste
   * when ANONYMOUS_PASTES is on, `read` always (hastebin's reads), `grant` when the query
   * carries a burned paste's file grant, which is the key (README, Files).
   */
  anonymous?: 'create' | 'read' | 'grant';
  /** The whole body is the content whatever its Content-Type, never a place for a token (hastebin's API). */
  raw?: true;
  /** Takes `multipart/form-data` with `file` parts (README, Files); its token is in the header or query only. */
  files?: true;
  handler: (r: ApiRequest) => Reply | Promise<Reply>;
}

/** An endpoint anyone may call, answered before any token is looked for (the OpenAPI document). */
export interface OpenRoute {
  scope: null;
  answer: (deps: ApiDeps) => Reply;
}

export type ApiRoute = TokenRoute | OpenRoute;

/** A string field of a query or body, or null when absent or not a string. */
export function stringField(fields: Fields, name: string): string | null {
  const v = Object.hasOwn(fields, name) ? fields[name] : undefined;
  return typeof v === 'string' ? v : null;
}
