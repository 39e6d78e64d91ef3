import { userViewer } from '../auth/viewer.ts';
import { bodyType, maxBodyBytes, readFields } from '../http/body.ts';
import { fromOtherSite } from '../http/cross-site.ts';
import { HttpError } from '../http/errors.ts';
import { discardUploads, multipartBoundary } from '../http/multipart.ts';
import { readUploads } from '../pipeline/uploads.ts';
import { siteOrigins } from '../http/site-origins.ts';
import { emptyFields } from '../http/fields.ts';
import { redirect } from '../http/reply.ts';
import { resolveRoute, Router } from '../http/router.ts';
import { PasteError } from '../paste/errors.ts';
import { toHttpError } from '../pipeline/refusal.ts';
import type { Side, Step } from '../pipeline/run.ts';
import { takesFiles, WebContext, type WebDeps, type WebRoute } from './context.ts';
import { CSRF_FIELD, csrfMatches } from './csrf.ts';
import { errorReply, NOT_FOUND_MESSAGE } from './pages/error.ts';
import { ACCOUNT_PATH } from './pages/password.ts';
import { proxySignIn, proxyUserOf } from './proxy-sign-in.ts';
import { viewPaste } from './pages/paste.ts';
import { oidcRoutes, webRoutes } from './routes.ts';
import { resolveSession, sessionIdOf } from './session.ts';
import { secureCookies } from './session-cookies.ts';

const CROSS_SITE = 'This form has expired or was sent from another site. Go back, reload the page and try again.';
const WORDS = { notFound: 'There is nothing at this address.', notAllowed: () => 'That method is not allowed here.' };

const routeOf = (ctx: WebContext): WebRoute => {
  if (ctx.route === null) throw new Error('the route step has not run');
  return ctx.route;
};

/** The session cookie's user; the viewer the paste rules see follows from it. */
const session: Step<WebContext> = (ctx) =>
  resolveSession(ctx)?.then(() => {
    if (ctx.user !== null) ctx.viewer = userViewer(ctx.user);
    return undefined;
  });

/**
 * Browsers name the page a POST comes from in `Origin`, or say `Sec-Fetch-Site: cross-site`;
 * either way another site's form is refused, whatever tokens it carries (a visitor's create
 * too). This site is its public address and, with BASE_URL unset, its loopback spellings
 * (http/site-origins.ts). A request without the headers (an old browser, a script) is left
 * to the CSRF token alone.
 */
const originOf =
  (ours: ReadonlySet<string>): Step<WebContext> =>
  (ctx) => {
    if (ctx.method !== 'POST') return undefined;
    if (fromOtherSite(ctx.req, ours, null))
      throw new HttpError('forbidden', `${CROSS_SITE} Use this service at ${ctx.deps.config.baseUrl}.`);
    return undefined;
  };

/**
 * A POST's form: 415 for another type, 413 past the size bound, 400 when malformed. A form
 * sent without a session (log in, register, a paste's password) is read from the bytes for
 * bodies of requests nobody has vouched for yet (503 when they are spent).
 */
const form: Step<WebContext> = (ctx) => {
  if (ctx.method !== 'POST') return undefined;
  const boundary =
    routeOf(ctx).files === true && takesFiles(ctx) ? multipartBoundary(ctx.req.headers['content-type']) : null;
  if (boundary !== null) return uploadForm(ctx, boundary);
  if (bodyType(ctx.req) !== 'form')
    throw new HttpError('unsupported_media_type', 'Forms must be sent as application/x-www-form-urlencoded.');
  const budget = ctx.user === null ? ctx.deps.preAuth : undefined;
  return readFields(ctx.req, 'form', maxBodyBytes(ctx.deps.config.maxPasteBytes), budget).then((fields) => {
    ctx.form = fields;
    return undefined;
  });
};

/**
 * A multipart form (README, Files): read as the API reads one (pipeline/uploads.ts). A file
 * past the limits stops the read; the page then shows the form again with why, and does
 * nothing else: its CSRF token was not read, so nothing may change.
 */
function uploadForm(ctx: WebContext, boundary: string): Promise<undefined> {
  return Promise.resolve()
    .then(() => readUploads(ctx.req, boundary, ctx.deps.files, ctx.deps.config.maxPasteBytes))
    .then(
      (m) => {
        ctx.form = m.fields;
        // A file input left empty still sends a part, with no name and no bytes.
        const empty = m.files.filter((f) => f.name === '' && f.size === 0);
        ctx.uploads = m.files.filter((f) => !empty.includes(f));
        return discardUploads(empty).then(() => undefined);
      },
      (err: unknown) => {
        if (!(err instanceof HttpError) || err.status !== 413) throw err;
        ctx.uploadRefused = err.message;
        return undefined;
      },
    );
}

/** Every POST repeats its CSRF token: the session's own, else the double-submit cookie that came with it. */
const csrf: Step<WebContext> = (ctx) => {
  if (ctx.method !== 'POST' || ctx.uploadRefused !== null) return undefined;
  const expected = ctx.session?.record.csrf ?? ctx.anonCsrf ?? '';
  const given = ctx.form[CSRF_FIELD];
  if (!csrfMatches(expected, typeof given === 'string' ? given : '')) throw new HttpError('forbidden', CROSS_SITE);
  return undefined;
};

/** Anonymous visitors of a members' page go to the login page (and back); non-admins get 403 from admin pages. */
const access: Step<WebContext> = (ctx) => {
  const { access: need, anonymous } = routeOf(ctx);
  if (need !== undefined && ctx.user === null && !(anonymous === true && ctx.deps.anonymous !== null)) {
    const back =
      ctx.method === 'GET' || ctx.method === 'HEAD'
        ? ctx.path + (ctx.rawQuery === '' ? '' : `?${ctx.rawQuery}`)
        : ctx.path;
    return redirect(`/login?next=${encodeURIComponent(back)}`, ctx.method === 'POST' ? 303 : 302);
  }
  if (need === 'admin' && ctx.user?.role !== 'admin') throw new HttpError('forbidden', 'This page is for admins only.');
  return undefined;
};

/**
 * A password an admin handed out is changed before anything else (README, Web pages: Your
 * account): every other page sends its user to the account page. API tokens are not affected.
 */
const newPassword: Step<WebContext> = (ctx) => {
  if (ctx.user?.password_temporary !== true || routeOf(ctx).beforeNewPassword === true) return undefined;
  return redirect(ACCOUNT_PATH, ctx.method === 'POST' ? 303 : 302);
};

/** The page; files a form brought and the page did not keep are removed before it is sent (pipeline/run.ts). */
const handle: Step<WebContext> = (ctx) => routeOf(ctx).handler(ctx);

const PASTE_PAGE: WebRoute = { handler: viewPaste };
/** `/<key>` or `/<key>.<ext>`: one segment, 10 letters or digits, an optional extension. */
const HASTE_LINK_RE = /^\/([A-Za-z0-9]{10})(?:\.[A-Za-z0-9]{1,16})?$/;

/**
 * A hastebin client's link, `/<key>` or `/<key>.js` (api/haste.ts): the paste's page, as at
 * `/p/<key>`. Only a GET or HEAD of a path no route has and of exactly that shape is one,
 * so no page, now or later, is hidden behind it.
 */
function hasteLink(
  router: Router<WebRoute>,
  ctx: WebContext,
): { data: WebRoute; params: Record<string, string> } | null {
  if (ctx.method !== 'GET' && ctx.method !== 'HEAD') return null;
  const m = HASTE_LINK_RE.exec(ctx.path);
  if (m === null || router.match(ctx.method, ctx.path).kind !== 'not_found') return null;
  const params = emptyFields() as Record<string, string>;
  params['hash'] = m[1] as string;
  ctx.pattern = '/:key';
  return { data: PASTE_PAGE, params };
}

/**
 * The web side (README, Web pages): who is asking (session cookie, then a trusted proxy's
 * header when AUTH_PROXY_HEADER is set), the route (404 / 405),
 * for a POST its Origin, the form and its CSRF token (403, 415, 413, 400, 403), the route's
 * access rule (login redirect or 403), a temporary password's redirect, then the page. Errors become escaped HTML
 * pages;
 * nothing here touches the API log.
 */
export function webSide(deps: WebDeps, routes = webRoutes): Side<WebContext> {
  const router = new Router<WebRoute>(deps.oidc === null ? routes : [...routes, ...oidcRoutes]);
  const secure = secureCookies(deps.config.baseUrl);
  const proxy = deps.config.authProxy;
  const origin = originOf(siteOrigins(deps.config.baseUrl, deps.config.baseUrlDefault));
  const route: Step<WebContext> = (ctx) => {
    const found = hasteLink(router, ctx) ?? resolveRoute(router, ctx.method, ctx.path, WORDS, ctx);
    ctx.route = found.data;
    ctx.params = found.params;
    return undefined;
  };
  return {
    context: (req, path, rawQuery, ip, clientKey, id) =>
      new WebContext(deps, secure, req, path, rawQuery, ip, clientKey, id),
    steps: [
      session,
      ...(proxy === null ? [] : [proxySignIn(proxy, deps.warn)]),
      route,
      origin,
      form,
      csrf,
      access,
      newPassword,
      handle,
    ],
    // A session's lookup (and a proxy's sign-in) waits for the accounts check, in the check phase (web/session.ts).
    waitsForCheckPhase: (ctx) => sessionIdOf(ctx) !== null || proxyUserOf(ctx, proxy) !== null,
    refuse: (ctx, err) => {
      const e = toHttpError(err, (fault) => deps.logError(fault, ctx.id), 'The server hit an unexpected error.');
      // The paste rules' "not found" is worded for people, and the same for every cause.
      const message = err instanceof PasteError && err.kind === 'not_found' ? NOT_FOUND_MESSAGE : e.message;
      return errorReply(ctx, e, message, ctx.id);
    },
  };
}
