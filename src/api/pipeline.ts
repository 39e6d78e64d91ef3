import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { authenticate, findToken, type Principal } from '../auth/principal.ts';
import { hasScope, type Scope } from '../auth/tokens.ts';
import type { AppDeps } from '../deps.ts';
import { bodyType, parseBody, readBody } from '../http/body.ts';
import { HttpError } from '../http/errors.ts';
import { findParam, NO_FIELDS, parseUrlEncoded, type Fields } from '../http/fields.ts';
import { json, type Headers, type Reply } from '../http/reply.ts';
import { respond } from '../http/respond.ts';
import type { Router } from '../http/router.ts';
import { isoTime, type ApiLogEntry } from '../log/entry.ts';
import type { Viewer } from '../paste/service.ts';

export interface ApiContext {
  deps: AppDeps;
  req: IncomingMessage;
  ip: string;
  query: Fields;
  body: Fields;
  principal: Principal;
  viewer: Viewer;
}

export interface ApiRoute {
  scope: Scope;
  handler: (ctx: ApiContext) => Promise<Reply>;
}

/** Per-request facts gathered as the pipeline runs, for the response headers and the log. */
interface Trace {
  principal: Principal | null;
  headers: Headers;
}

/**
 * One API request, checked in the order CONTRACT §6 fixes: endpoint (404), method (405),
 * authentication (401, or 429 once the IP's failed-auth budget is spent), the token's
 * rate limit (429), scope (403), body (415, 413, 400), then the endpoint itself.
 * Every request, whatever its fate, ends in exactly one log line.
 */
export async function handleApi(
  deps: AppDeps,
  router: Router<ApiRoute>,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  rawQuery: string,
  ip: string,
): Promise<void> {
  const started = performance.now();
  const trace: Trace = { principal: null, headers: { 'x-content-type-options': 'nosniff' } };
  let reply: Reply;
  let error: string | undefined;
  try {
    reply = await run(deps, router, req, path, rawQuery, ip, trace);
  } catch (err) {
    const e = toHttpError(err, deps);
    error = e.message;
    reply = json({ ok: false, error: e.message, code: e.code, ...e.extra.body }, e.status, e.extra.headers);
  }
  respond(res, reply, trace.headers);
  const entry: ApiLogEntry = {
    time: isoTime(deps.now()),
    token_id: trace.principal?.tokenId ?? null,
    user_id: trace.principal?.userId ?? null,
    method: req.method ?? '',
    endpoint: path,
    status: reply.status,
    ip,
    duration_ms: Math.round((performance.now() - started) * 100) / 100,
  };
  if (error !== undefined) entry.error = error;
  deps.log.append(entry);
}

async function run(
  deps: AppDeps,
  router: Router<ApiRoute>,
  req: IncomingMessage,
  path: string,
  rawQuery: string,
  ip: string,
  trace: Trace,
): Promise<Reply> {
  const method = req.method ?? 'GET';
  const match = router.match(method, path);
  if (match.kind === 'not_found') throw new HttpError('not_found', 'Unknown endpoint');
  if (match.kind === 'method_not_allowed') {
    throw new HttpError('method_not_allowed', `Method ${method} is not allowed here`, {
      headers: { allow: match.allow.join(', ') },
    });
  }
  // A malformed query string is a 400, but only after authentication, rate limit and
  // scope (CONTRACT §6); meanwhile the token is picked out of it leniently.
  let query: Fields | HttpError;
  try {
    query = parseUrlEncoded(rawQuery, 'query string');
  } catch (err) {
    query = asHttpError(err);
  }
  const type = method === 'POST' ? bodyType(req) : null;

  // A form body may carry the token (SPEC §5.2; a JSON body's `token` key is taken the same
  // way), so such a body is read before auth. A body error then just means "no token
  // here"; the body check proper comes after the auth, rate and scope checks.
  let body: Fields | HttpError | null = null;
  const found = findToken(req, query instanceof HttpError ? findParam(rawQuery, 'token') : stringField(query, 'token'));
  if (found === null && type !== null) body = await readFields(req, type, deps).catch(asHttpError);
  const secret = found ?? (body instanceof HttpError || body === null ? null : stringField(body, 'token'));

  await deps.accounts.fresh();
  const principal = authenticate(deps, secret, ip);
  trace.principal = principal;

  const limit = principal.rateLimit;
  trace.headers['x-ratelimit-limit'] = String(limit);
  if (limit > 0) {
    const d = deps.limiter.consume(`token:${principal.tokenId}`, limit);
    trace.headers['x-ratelimit-remaining'] = String(d.remaining);
    if (!d.allowed) {
      throw new HttpError('rate_limited', 'Rate limit exceeded; slow down', {
        body: { limit_per_minute: limit },
        headers: { 'retry-after': String(d.retryAfterSec) },
      });
    }
  }

  const route = match.data;
  if (!hasScope(principal.scopes, route.scope)) {
    throw new HttpError('forbidden', `This token lacks the "${route.scope}" scope`);
  }

  if (method === 'POST') {
    if (type === null) throw new HttpError('unsupported_media_type', 'Content-Type must be application/json or application/x-www-form-urlencoded');
    body ??= await readFields(req, type, deps);
  }
  if (query instanceof HttpError) throw query;
  if (body instanceof HttpError) throw body;
  const viewer: Viewer = { userId: principal.userId, isAdmin: principal.scopes.includes('admin') };
  return route.handler({ deps, req, ip, query, body: body ?? NO_FIELDS, principal, viewer });
}

async function readFields(req: IncomingMessage, type: 'json' | 'form', deps: AppDeps): Promise<Fields> {
  // The largest body a maximal paste can need: every byte percent-encoded, plus the other fields.
  const limit = deps.config.maxPasteBytes * 3 + 64 * 1024;
  return parseBody(type, await readBody(req, limit));
}

export function stringField(fields: Fields, name: string): string | null {
  const v = Object.hasOwn(fields, name) ? fields[name] : undefined;
  return typeof v === 'string' ? v : null;
}

const asHttpError = (err: unknown): HttpError => {
  if (err instanceof HttpError) return err;
  throw err;
};

/** Anything that is not an HttpError is a fault: logged in full here, generic to the client. */
function toHttpError(err: unknown, deps: AppDeps): HttpError {
  if (err instanceof HttpError) return err;
  deps.logError(err);
  return new HttpError('internal', 'Internal server error');
}
