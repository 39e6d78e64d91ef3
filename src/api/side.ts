import type { IncomingMessage } from 'node:http';
import { AuthError } from '../auth/errors.ts';
import { tokenViewer, type Principal } from '../auth/viewer.ts';
import { ANONYMOUS_READER, anonymousCreator, NOBODY } from './open-principals.ts';
import { hasScope } from '../auth/tokens.ts';
import { bodyType, maxBodyBytes, readFields, type BodyType } from '../http/body.ts';
import { Cors } from '../http/cors.ts';
import { multipartBoundary } from '../http/multipart.ts';
import { readUploads } from '../pipeline/uploads.ts';
import { fromOtherSite } from '../http/cross-site.ts';
import { siteOrigins } from '../http/site-origins.ts';
import { badRequest, HttpError } from '../http/errors.ts';
import { emptyFields, findParam, NO_FIELDS, parseUrlEncoded, type Fields } from '../http/fields.ts';
import { json } from '../http/reply.ts';
import { resolveRoute, Router } from '../http/router.ts';
import { performance } from 'node:perf_hooks';
import type { Decision } from '../ratelimit/bucket.ts';
import { whenReady } from '../ratelimit/limiter.ts';
import { IsoTimes, type ApiLogEntry } from '../log/entry.ts';
import { RequestContext } from '../pipeline/context.ts';
import { toHttpError } from '../pipeline/refusal.ts';
import type { Side, Step } from '../pipeline/run.ts';
import { stringField, type ApiDeps, type ApiRoute, type TokenRoute } from './request.ts';
import { hasteRoutes, isHastePath } from './haste.ts';
import { apiV1Routes } from './v1/routes.ts';

/** An API request as its steps fill it in. */
export class ApiContext extends RequestContext {
  route: ApiRoute | null = null;
  params: Readonly<Record<string, string>> = NO_PARAMS;
  /** The query string, or why it is malformed: said only after auth, rate limit and scope. */
  query: Fields | HttpError = NO_FIELDS;
  type: BodyType | null = null;
  /** The body once read (null before), or why it could not be. */
  body: Fields | HttpError | null = null;
  /** The token as presented (header, query or form field), null when none was. */
  secret: string | null = null;
  principal: Principal | null = null;
  /** The refusal's message, for the log line. */
  error: string | undefined = undefined;
  /** A refused token's id, when it is (or was) one of ours (README, API request log). */
  refusedTokenId: string | null = null;

  constructor(
    readonly deps: ApiDeps,
    req: IncomingMessage,
    path: string,
    rawQuery: string,
    ip: string,
    clientKey: string,
    id: string,
  ) {
    // An answer to a token (raw.php's may be in the query string) is never for a shared cache.
    super(req, path, rawQuery, ip, clientKey, id, {
      'x-request-id': id,
      'x-content-type-options': 'nosniff',
      'cache-control': 'no-store',
    });
  }
}

const NO_PARAMS: Readonly<Record<string, string>> = Object.freeze(Object.create(null) as Record<string, string>);

const WORDS = { notFound: 'Unknown endpoint', notAllowed: (m: string) => `Method ${m} is not allowed here` };

const routeOf = (ctx: ApiContext): TokenRoute => {
  if (ctx.route === null || ctx.route.scope === null) throw new Error('the route and open steps have not run');
  return ctx.route;
};

/**
 * Cross-origin access (README, CORS): an allowed origin's page may read every answer, errors
 * included, and a browser's preflight is answered here, before any route or token.
 */
const cors: Step<ApiContext> = (ctx) => {
  const policy = ctx.deps.cors;
  if (policy === null) return undefined;
  policy.decorate(ctx.req, ctx.headers);
  return Cors.isPreflight(ctx.req) ? policy.preflight(ctx.req) : undefined;
};

/**
 * An endpoint that needs no token (the OpenAPI document, the language list) is answered here, before any is asked for.
 */
const open: Step<ApiContext> = (ctx) => (ctx.route?.scope === null ? ctx.route.answer(ctx.deps) : undefined);

/**
 * The token: `Authorization: Bearer` first, then the `token` query parameter, then the form
 * (or JSON) body's `token` field (README, API). Only a request that carries no token elsewhere
 * has its body read before authentication, and a body error then just means "no token
 * here": the body check proper comes after the auth, rate and scope checks.
 */
const credentials: Step<ApiContext> = (ctx) => {
  try {
    ctx.query = parseUrlEncoded(ctx.rawQuery, 'query string');
  } catch (err) {
    ctx.query = asHttpError(err);
  }
  ctx.type = ctx.method === 'POST' ? bodyType(ctx.req) : null;
  const header = ctx.req.headers.authorization;
  // A malformed Authorization header counts as a bad token rather than being ignored.
  if (header !== undefined) ctx.secret = /^Bearer +([^\s]+) *$/i.exec(header)?.[1] ?? '';
  else
    ctx.secret = noneIfEmpty(
      ctx.query instanceof HttpError ? findParam(ctx.rawQuery, 'token') : stringField(ctx.query, 'token'),
    );
  // A text body is all content: it has no token field to look for; nor has a raw one.
  if (ctx.secret !== null || ctx.type === null || ctx.type === 'text' || routeOf(ctx).raw === true) return undefined;
  return readFields(ctx.req, ctx.type, maxBodyBytes(ctx.deps.maxPasteBytes), ctx.deps.preAuth).then(
    (body) => {
      ctx.body = body;
      ctx.secret = noneIfEmpty(stringField(body, 'token'));
      return undefined;
    },
    (err: unknown) => {
      ctx.body = asHttpError(err);
      return undefined;
    },
  );
};

/**
 * An empty `token` field or parameter is no token, as a form with the field left blank
 * means (pastebinit's config, contrib/pastebinit): without ANONYMOUS_PASTES it is the same
 * 401 "token required" as before. An empty bearer header stays a malformed one.
 */
const noneIfEmpty = (secret: string | null): string | null => (secret === '' ? null : secret);

/**
 * 401 for a missing or bad token, 429 once the client's failed-auth budget is spent, against
 * the accounts as they are now (a token the CLI just made or revoked counts at once).
 */
const authenticate: Step<ApiContext> = (ctx) => {
  const door = ctx.deps.anonymous;
  const open = ctx.secret === null ? routeOf(ctx).anonymous : undefined;
  const reader = open === 'read' || (open === 'grant' && (findParam(ctx.rawQuery, 'grant') ?? '') !== '');
  const tokenless = reader ? ANONYMOUS_READER : open === 'create' && door !== null ? anonymousCreator(door) : null;
  if (tokenless !== null) {
    ctx.principal = tokenless;
    ctx.viewer = NOBODY;
    ctx.headers['x-ratelimit-limit'] = String(tokenless.rateLimit);
    return undefined;
  }
  return ctx.deps.authenticator.current(ctx.secret).then(() =>
    whenReady(ctx.deps.authenticator.token(ctx.secret, ctx, ctx.req.socket), (principal) => {
      ctx.principal = principal;
      ctx.viewer = tokenViewer(principal);
      ctx.headers['x-ratelimit-limit'] = String(principal.rateLimit);
      return undefined;
    }),
  );
};

/**
 * A create without a token from another site's page is refused (README, Anonymous pastes):
 * else any site could have its visitors' browsers fill the Recent list from their own
 * addresses. Before the client's budget, which such a request does not spend.
 */
const crossSite =
  (ours: ReadonlySet<string>): Step<ApiContext> =>
  (ctx) => {
    if (ctx.principal?.anonymous !== true || routeOf(ctx).anonymous !== 'create') return undefined;
    if (!fromOtherSite(ctx.req, ours, ctx.deps.cors)) return undefined;
    throw new HttpError(
      'cross_site',
      "A paste without a token is not taken from another site's page. Send a token, or create it at " +
        `${ctx.deps.baseUrl}.`,
    );
  };

/**
 * The token's bucket (README, Rate limits): 429 with `limit_per_minute` and `Retry-After`.
 * Decided at once in memory; on a database, by one statement every instance shares.
 */
const rateLimit: Step<ApiContext> = (ctx) => {
  const p = principalOf(ctx);
  const limit = p.rateLimit;
  if (limit === 0) return undefined;
  const d =
    p.anonymous === true && ctx.deps.anonymous !== null
      ? ctx.deps.anonymous.admit(ctx.clientKey)
      : ctx.deps.limiter.consume(`token:${p.tokenId}`, limit);
  return d instanceof Promise ? d.then((decided) => limited(ctx, limit, decided)) : limited(ctx, limit, d);
};

const limited = (ctx: ApiContext, limit: number, d: Decision): undefined => {
  ctx.headers['x-ratelimit-remaining'] = String(d.remaining);
  if (!d.allowed) {
    throw new HttpError('rate_limited', 'Rate limit exceeded; slow down', {
      body: { limit_per_minute: limit },
      headers: { 'retry-after': String(d.retryAfterSec) },
    });
  }
  return undefined;
};

const scope: Step<ApiContext> = (ctx) => {
  const need = routeOf(ctx).scope;
  if (!hasScope(principalOf(ctx).scopes, need))
    throw new HttpError('forbidden', `This token lacks the "${need}" scope`);
  return undefined;
};

/** 415 for a POST of another type, 413 past the size bound, 400 for a malformed body or query. */
const body: Step<ApiContext> = (ctx) => {
  const check = (): undefined => {
    if (ctx.query instanceof HttpError) throw ctx.query;
    if (ctx.body instanceof HttpError) throw ctx.body;
    return undefined;
  };
  if (ctx.method !== 'POST' || ctx.body !== null) return check();
  if (routeOf(ctx).raw === true) return rawBody(ctx).then(check);
  const files = routeOf(ctx).files === true;
  const boundary = files ? multipartBoundary(ctx.req.headers['content-type']) : null;
  if (boundary !== null) return uploads(ctx, boundary).then(check);
  if (files && /^\s*multipart\/form-data\s*(;|$)/i.test(ctx.req.headers['content-type'] ?? ''))
    throw badRequest('multipart/form-data needs a boundary parameter of 1 to 70 characters');
  const text = routeOf(ctx).text === true;
  if (ctx.type === null || (ctx.type === 'text' && !text)) {
    throw new HttpError(
      'unsupported_media_type',
      'Content-Type must be application/json or application/x-www-form-urlencoded' +
        `${text ? ', or text/plain (UTF-8)' : ''}${files ? ', or multipart/form-data' : ''}`,
    );
  }
  return readFields(ctx.req, ctx.type, maxBodyBytes(ctx.deps.maxPasteBytes)).then((fields) => {
    ctx.body = ctx.type === 'text' && !(ctx.query instanceof HttpError) ? withQuery(fields, ctx.query) : fields;
    return check();
  });
};

/**
 * A multipart body (README, Files): its text parts are the fields, its `file` parts spooled
 * to temporary files. Refused before a byte is read when its declared length is past what
 * the limits allow; an anonymous create that may not bring files (ANONYMOUS_FILES) is
 * refused at its first file part, so a form of text parts alone is still a paste.
 */
function uploads(ctx: ApiContext, boundary: string): Promise<void> {
  const noFiles = principalOf(ctx).anonymous === true && !ctx.deps.files.limits.anonymousFiles;
  const refusal = noFiles
    ? new HttpError('forbidden', 'A paste without a token takes no files on this server (ANONYMOUS_FILES)')
    : undefined;
  return readUploads(ctx.req, boundary, ctx.deps.files, ctx.deps.maxPasteBytes, refusal).then((m) => {
    ctx.body = m.fields;
    ctx.uploads = m.files;
  });
}

/**
 * A raw body (hastebin's `POST /documents`): the content whatever the Content-Type says,
 * but a multipart form, which is not text, and the other fields from the query string.
 */
function rawBody(ctx: ApiContext): Promise<void> {
  if (/^\s*multipart\//i.test(ctx.req.headers['content-type'] ?? ''))
    throw new HttpError('unsupported_media_type', 'Send the text itself as the body, not a multipart form');
  return readFields(ctx.req, 'text', maxBodyBytes(ctx.deps.maxPasteBytes)).then((fields) => {
    ctx.body = ctx.query instanceof HttpError ? fields : withQuery(fields, ctx.query);
  });
}

/** A text body's `content` with the other fields from the query string (the body's wins). */
function withQuery(body: Fields, query: Fields): Fields {
  const fields = emptyFields();
  for (const [k, v] of Object.entries(query)) fields[k] = v;
  fields['content'] = body['content'] ?? null;
  return fields;
}

const principalOf = (ctx: ApiContext): Principal => {
  if (ctx.principal === null) throw new Error('the authenticate step has not run');
  return ctx.principal;
};

/**
 * The API side (README, API): its steps in the order the status table gives, errors as
 * the JSON envelope, and one log line for every request whatever its fate, but for those
 * past their client's budget of lines when no valid token pays for them.
 */
export function apiSide(deps: ApiDeps, routes = [...apiV1Routes, ...hasteRoutes]): Side<ApiContext> {
  const router = new Router<ApiRoute>(routes);
  const iso = new IsoTimes();
  const ours = siteOrigins(deps.baseUrl, deps.loopbackIsOurs ?? false);
  const route: Step<ApiContext> = (ctx) => {
    const found = resolveRoute(router, ctx.method, ctx.path, WORDS, ctx);
    ctx.route = found.data;
    ctx.params = found.params;
    return undefined;
  };
  const handle: Step<ApiContext> = (ctx) => {
    const { req, ip, clientKey, viewer } = ctx;
    if (viewer === null) throw new Error('the authenticate step has not run');
    // The body step has thrown whatever query or body error there was: both are fields now.
    const query = ctx.query as Fields;
    const body = (ctx.body as Fields | null) ?? NO_FIELDS;
    const { params, uploads } = ctx;
    const r = { deps, req, ip, clientKey, query, body, params, principal: principalOf(ctx), viewer, uploads };
    return routeOf(ctx).handler(r);
  };
  return {
    context: (req, path, rawQuery, ip, clientKey, id) => new ApiContext(deps, req, path, rawQuery, ip, clientKey, id),
    steps: [cors, route, open, credentials, authenticate, crossSite(ours), rateLimit, scope, body, handle],
    refuse: (ctx, err) => {
      const e = toHttpError(err, (fault) => deps.logError(fault, ctx.id), 'Internal server error');
      ctx.error = e.message;
      if (err instanceof AuthError && err.tokenId !== undefined) ctx.refusedTokenId = err.tokenId;
      // hastebin's clients read its error shape (api/haste.ts).
      if (isHastePath(ctx.path)) return json({ message: e.message, ...e.extra.body }, e.status, e.extra.headers);
      return json({ ok: false, error: e.message, code: e.code, ...e.extra.body }, e.status, e.extra.headers);
    },
    done: (ctx, reply) => {
      // Without a valid token nothing else bounds how fast a client makes lines.
      const anonymous = ctx.principal?.anonymous === true;
      const unlogged = ctx.principal === null || anonymous ? deps.logBudget.admit(ctx.clientKey) : 0;
      if (unlogged === null) return;
      const entry: ApiLogEntry = {
        time: iso.of(deps.now()),
        token_id: anonymous ? null : (ctx.principal?.tokenId ?? ctx.refusedTokenId),
        user_id: anonymous ? null : (ctx.principal?.userId ?? null),
        method: ctx.method,
        endpoint: ctx.path,
        status: reply.status,
        ip: ctx.ip,
        duration_ms: Math.round((performance.now() - ctx.started) * 100) / 100,
      };
      // A refusal's line names the request, so its X-Request-Id leads to it (and to the fault's report).
      if (ctx.error !== undefined) {
        entry.request_id = ctx.id;
        entry.error = ctx.error;
      }
      if (unlogged > 0) entry.unlogged = unlogged;
      deps.log.append(entry);
    },
  };
}

/**
 * A body error found while gathering credentials (413, 400) is kept for its turn. A client
 * that left, a body past the pre-authentication budget (503) and faults end the request now.
 */
function asHttpError(err: unknown): HttpError {
  if (err instanceof HttpError && err.code !== 'client_closed' && err.code !== 'unavailable') return err;
  throw err;
}
