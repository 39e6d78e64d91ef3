import type { IncomingMessage, ServerResponse } from 'node:http';
import { anonCsrfCookie, anonCsrfCookieName, CSRF_FIELD, csrfMatches, isAnonCsrfToken, newAnonCsrfToken } from '../auth/csrf.ts';
import { secureCookies, sessionCookieName } from '../auth/sessions.ts';
import type { AppDeps } from '../deps.ts';
import { bodyType, parseBody, readBody } from '../http/body.ts';
import { parseCookies } from '../http/cookies.ts';
import { HttpError } from '../http/errors.ts';
import { emptyFields, parseUrlEncodedLenient } from '../http/fields.ts';
import { redirect, type Headers, type Reply } from '../http/reply.ts';
import { respond } from '../http/respond.ts';
import type { Router } from '../http/router.ts';
import type { WebContext, WebRoute } from './context.ts';
import { SECURITY_HEADERS, type Chrome } from './layout.ts';
import { errorReply } from './pages/error.ts';
import { resolveSession } from './session.ts';

const CROSS_SITE = 'This form has expired or was sent from another site. Go back, reload the page and try again.';

/**
 * One web request: who is asking (session cookie), the route (404 / 405), for a POST its
 * Origin, the form and its CSRF token (403, 415, 413, 400, 403), the route's access rule
 * (login redirect or 403), then the page. Errors become escaped HTML pages. Nothing here
 * touches the API log.
 */
export async function handleWeb(
  deps: AppDeps,
  router: Router<WebRoute>,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  rawQuery: string,
  ip: string,
): Promise<void> {
  const method = req.method ?? 'GET';
  const cookies: string[] = [];
  const headers: Headers = { ...SECURITY_HEADERS, 'cache-control': 'no-store' };
  let chrome: Chrome = { user: null, path, csrf: () => '' };
  let result: Reply;
  try {
    const jar = parseCookies(req);
    const secure = secureCookies(deps.config.baseUrl);
    const { auth, cookies: sessionCookies } = await resolveSession(deps, jar.get(sessionCookieName(secure)));
    cookies.push(...sessionCookies);
    const key = deps.sessions.serverKey;
    const presented = jar.get(anonCsrfCookieName(secure)) ?? '';
    // Only a token this server signed counts; a planted or stale one is as good as none.
    const cookieToken = isAnonCsrfToken(key, presented) ? presented : undefined;
    let anon = cookieToken;
    // Visitors without a session get their double-submit cookie only when a page shows a form.
    const csrf = (): string => {
      if (auth !== null) return auth.session.record.csrf;
      if (anon === undefined) {
        anon = newAnonCsrfToken(key);
        cookies.push(anonCsrfCookie(anon, secure));
      }
      return anon;
    };
    chrome = { user: auth?.user ?? null, path, csrf };

    const match = router.match(method, path);
    if (match.kind === 'not_found') throw new HttpError('not_found', 'There is nothing at this address.');
    if (match.kind === 'method_not_allowed') {
      throw new HttpError('method_not_allowed', 'That method is not allowed here.', { headers: { allow: match.allow.join(', ') } });
    }
    const ctx: WebContext = {
      ...chrome,
      deps,
      req,
      method,
      params: match.params,
      query: parseUrlEncodedLenient(rawQuery),
      form: emptyFields(),
      cookies: jar,
      secure,
      ip,
      session: auth?.session ?? null,
      viewer: auth === null ? null : { userId: auth.user.id, isAdmin: auth.user.role === 'admin' },
    };
    if (method === 'POST') {
      if (!sameOrigin(req, deps.config.baseUrl)) throw new HttpError('forbidden', `${CROSS_SITE} Use this service at ${deps.config.baseUrl}.`);
      ctx.form = await readForm(deps, req);
      // A session's own token, else the double-submit cookie that came with this very request.
      const expected = auth?.session.record.csrf ?? cookieToken ?? '';
      const given = ctx.form[CSRF_FIELD];
      if (!csrfMatches(expected, typeof given === 'string' ? given : '')) throw new HttpError('forbidden', CROSS_SITE);
    }
    const route = match.data;
    if (route.access !== undefined && ctx.user === null) {
      const back = method === 'GET' || method === 'HEAD' ? path + (rawQuery === '' ? '' : `?${rawQuery}`) : path;
      result = redirect(`/login?next=${encodeURIComponent(back)}`, method === 'POST' ? 303 : 302);
    } else if (route.access === 'admin' && ctx.user?.role !== 'admin') {
      throw new HttpError('forbidden', 'This page is for admins only.');
    } else {
      result = await route.handler(ctx);
    }
  } catch (err) {
    let e: HttpError;
    if (err instanceof HttpError) e = err;
    else {
      deps.logError(err);
      e = new HttpError('internal', 'The server hit an unexpected error.');
    }
    result = errorReply(chrome, e);
  }
  const own = result.headers?.['set-cookie'];
  if (own !== undefined) cookies.push(...(Array.isArray(own) ? own : [own]));
  if (cookies.length > 0) result = { ...result, headers: { ...result.headers, 'set-cookie': cookies } };
  respond(res, result, headers);
}

/**
 * Browsers name the page a POST comes from in `Origin`; one that is not our public address
 * is another site's form, whatever tokens it carries. A request without the header (an old
 * browser, a script) is left to the CSRF token alone.
 */
function sameOrigin(req: IncomingMessage, baseUrl: string): boolean {
  const origin = req.headers.origin;
  return origin === undefined || origin === new URL(baseUrl).origin;
}

async function readForm(deps: AppDeps, req: IncomingMessage): Promise<WebContext['form']> {
  if (bodyType(req) !== 'form') throw new HttpError('unsupported_media_type', 'Forms must be sent as application/x-www-form-urlencoded.');
  // The largest form a maximal paste can need: every byte percent-encoded, plus the other fields.
  return parseBody('form', await readBody(req, deps.config.maxPasteBytes * 3 + 64 * 1024));
}
