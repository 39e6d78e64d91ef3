import type { IncomingMessage, ServerResponse } from 'node:http';
import { ANON_CSRF_COOKIE, anonCsrfCookie, CSRF_FIELD, csrfMatches, isCsrfToken, newCsrfToken } from '../auth/csrf.ts';
import { SESSION_COOKIE, secureCookies } from '../auth/sessions.ts';
import type { AppDeps } from '../deps.ts';
import { bodyType, parseBody, readBody } from '../http/body.ts';
import { parseCookies } from '../http/cookies.ts';
import { HttpError } from '../http/errors.ts';
import { emptyFields, parseUrlEncoded } from '../http/fields.ts';
import { redirect, type Headers, type Reply } from '../http/reply.ts';
import { respond } from '../http/respond.ts';
import type { Router } from '../http/router.ts';
import type { WebContext, WebRoute } from './context.ts';
import { SECURITY_HEADERS, type Chrome } from './layout.ts';
import { errorReply } from './pages/error.ts';
import { resolveSession } from './session.ts';

/**
 * One web request: who is asking (session cookie), the route (404 / 405), for a POST the
 * form and its CSRF token (415, 413, 400, 403), the route's access rule (login redirect or
 * 403), then the page. Errors become escaped HTML pages. Nothing here touches the API log.
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
    const { auth, cookies: sessionCookies } = await resolveSession(deps, jar.get(SESSION_COOKIE));
    cookies.push(...sessionCookies);
    const secure = secureCookies(deps.config.baseUrl);
    const presented = jar.get(ANON_CSRF_COOKIE) ?? '';
    const cookieToken = isCsrfToken(presented) ? presented : undefined;
    let anon = cookieToken;
    // Visitors without a session get their double-submit cookie only when a page shows a form.
    const csrf = (): string => {
      if (auth !== null) return auth.session.record.csrf;
      if (anon === undefined) {
        anon = newCsrfToken();
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
      query: parseUrlEncoded(rawQuery, 'query string'),
      form: emptyFields(),
      ip,
      session: auth?.session ?? null,
      viewer: auth === null ? null : { userId: auth.user.id, isAdmin: auth.user.role === 'admin' },
    };
    if (method === 'POST') {
      ctx.form = await readForm(deps, req);
      // A session's own token, else the double-submit cookie that came with this very request.
      const expected = auth?.session.record.csrf ?? cookieToken ?? '';
      const given = ctx.form[CSRF_FIELD];
      if (!csrfMatches(expected, typeof given === 'string' ? given : '')) {
        throw new HttpError('forbidden', 'This form has expired or was sent from another site. Go back, reload the page and try again.');
      }
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
    // Refusing a body we did not read to the end: close, so the rest never reaches a parser.
    if (e.code === 'payload_too_large') headers['connection'] = 'close';
    result = errorReply(chrome, e);
  }
  const own = result.headers?.['set-cookie'];
  if (own !== undefined) cookies.push(...(Array.isArray(own) ? own : [own]));
  if (cookies.length > 0) result = { ...result, headers: { ...result.headers, 'set-cookie': cookies } };
  respond(res, result, headers);
}

async function readForm(deps: AppDeps, req: IncomingMessage): Promise<WebContext['form']> {
  if (bodyType(req) !== 'form') throw new HttpError('unsupported_media_type', 'Forms must be sent as application/x-www-form-urlencoded.');
  // The largest form a maximal paste can need: every byte percent-encoded, plus the other fields.
  return parseBody('form', await readBody(req, deps.config.maxPasteBytes * 3 + 64 * 1024));
}
