import { checkCredentials } from '../../auth/accounts.ts';
import { AccountError } from '../../auth/errors.ts';
import { HttpError } from '../../http/errors.ts';
import { html as reply, redirect, type Reply } from '../../http/reply.ts';
import { statusOf } from '../../pipeline/refusal.ts';
import type { User } from '../../auth/records.ts';
import { field, type WebContext } from '../context.ts';
import { csrfInput, notice, problemList } from '../forms.ts';
import { html, type SafeHtml } from '../html.ts';
import { LOGO, page } from '../layout.ts';
import { clearOidcSignedInCookie, oidcSignedInCookieName } from '../oidc-flow.ts';
import { clearSessionCookie, sessionCookie } from '../session-cookies.ts';

/** Registrations allowed per client address per minute (each costs a slow hash). */
export const REGISTER_IP_LIMIT_PER_MINUTE = 10;

/**
 * Where to go after logging in: only a path on this site, never `//evil.example` or
 * `/\evil.example` (which browsers read as another host), so the form is no open redirect.
 */
export function safeNext(next: string): string {
  return /^\/(?![/\\])[\x21-\x7e]*$/.test(next) ? next : '/';
}

function authCard(_ctx: WebContext, title: string, inner: SafeHtml): SafeHtml {
  return html`<section class="card narrow auth-card">
<div class="center">${LOGO}</div>
<h1 class="center">${title}</h1>
${inner}
</section>`;
}

function loginPage(ctx: WebContext, opts: { name?: string; next: string; problems?: string[] }): string {
  const form = html`${problemList(opts.problems ?? [])}
<form method="post" action="/login">
${csrfInput(ctx.csrf())}<input type="hidden" name="next" value="${opts.next}">
<div class="field"><label for="name">User name</label><input type="text" id="name" name="name" \
value="${opts.name ?? ''}" autocomplete="username" autocapitalize="none" spellcheck="false" required autofocus></div>
<div class="field"><label for="password">Password</label><input type="password" id="password" name="password" \
autocomplete="current-password" required></div>
<button class="btn btn-primary btn-block" type="submit">Log in</button>
</form>
${ssoButton(ctx, opts.next)}
<p class="center muted small">No account yet? ${
    ctx.registrationOpen() ? html`<a href="/register">Register</a>` : 'Ask an admin of this server for one.'
  }</p>`;
  return page(ctx, 'Log in', authCard(ctx, 'Log in', form));
}

/** With OIDC_ISSUER, the way to the provider beside the password form (README, Sign-in with OpenID Connect). */
function ssoButton(ctx: WebContext, next: string): SafeHtml | string {
  const oidc = ctx.deps.config.oidc;
  if (oidc === null) return '';
  const href = next === '/' ? '/login/oidc' : `/login/oidc?next=${encodeURIComponent(next)}`;
  return html`<p class="center muted small">or</p>
<a class="btn btn-block" href="${href}">${oidc.buttonLabel}</a>`;
}

/** GET /login */
export async function loginForm(ctx: WebContext): Promise<Reply> {
  const next = safeNext(field(ctx.query, 'next'));
  if (ctx.user !== null) return redirect(next);
  return reply(loginPage(ctx, { next }));
}

/**
 * POST /login: failures are limited per address, and per address and account
 * (auth/authenticate.ts); then a fresh session.
 */
export async function login(ctx: WebContext): Promise<Reply> {
  const name = field(ctx.form, 'name').trim();
  const password = field(ctx.form, 'password');
  const next = safeNext(field(ctx.form, 'next'));
  const again = (status: number, problem: string, typed: string): Reply =>
    reply(loginPage(ctx, { name: typed, next, problems: [problem] }), status);
  const outcome = await ctx.deps.authenticator.login(name, password, ctx.clientKey);
  if ('refused' in outcome) {
    const wait = outcome.refused.retryAfterSec;
    ctx.headers['retry-after'] = String(wait);
    return again(429, `Too many login attempts. Wait ${wait} seconds and try again.`, name);
  }
  // A name no account can have is not echoed back (it may be a password typed in the wrong box).
  if ('wrong' in outcome) return again(401, 'Wrong user name or password.', name.length > 32 ? '' : name);
  if ('disabled' in outcome) return again(403, 'This account is disabled. Ask an admin to enable it.', name);
  await ctx.deps.accounts.recordLogin(outcome.user.id);
  return startSession(ctx, outcome.user, next);
}

async function startSession(ctx: WebContext, user: User, next: string): Promise<Reply> {
  const { deps } = ctx;
  // A new id at every login, so an id planted before the login (fixation) is worth nothing.
  if (ctx.session !== null) await deps.sessions.destroy(ctx.session.id);
  const session = await deps.sessions.create(user.id);
  ctx.setCookies.push(sessionCookie(session.id, deps.config.sessionIdleMs, ctx.secure));
  return redirect(next, 303);
}

function registerPage(ctx: WebContext, opts: { name?: string; problems?: string[] } = {}): string {
  const first = ctx.deps.accounts.users.length === 0;
  const form = html`${
    first ? notice('info', 'You are the first user here, so your account will be the admin account.') : ''
  }
${problemList(opts.problems ?? [])}
<form method="post" action="/register">
${csrfInput(ctx.csrf())}
<div class="field"><label for="name">User name</label><input type="text" id="name" name="name" \
value="${opts.name ?? ''}" autocomplete="username" autocapitalize="none" spellcheck="false" maxlength="32" required \
autofocus><span class="hint">Letters, digits, ".", "_" and "-"; up to 32.</span></div>
<div class="field"><label for="password">Password</label><input type="password" id="password" name="password" \
autocomplete="new-password" minlength="8" required><span class="hint">At least 8 characters.</span></div>
<div class="field"><label for="confirm">Repeat the password</label><input type="password" id="confirm" name="confirm" \
autocomplete="new-password" minlength="8" required></div>
<button class="btn btn-primary btn-block" type="submit">Create account</button>
</form>
<p class="center muted small">Already registered? <a href="/login">Log in</a></p>`;
  return page(ctx, 'Register', authCard(ctx, 'Create an account', form));
}

function closedPage(ctx: WebContext): string {
  return page(
    ctx,
    'Registration closed',
    authCard(
      ctx,
      'Registration is closed',
      html`<p class="center muted">New accounts are created by an admin on this server. If you already have one, \
<a href="/login">log in</a>.</p>`,
    ),
  );
}

/** GET /register */
export async function registerForm(ctx: WebContext): Promise<Reply> {
  if (ctx.user !== null) return redirect('/');
  await ctx.deps.accounts.fresh();
  return reply(ctx.registrationOpen() ? registerPage(ctx) : closedPage(ctx));
}

/**
 * POST /register: the first account becomes admin; later ones only with OPEN_REGISTRATION=1.
 * A logged-in user is sent home: the form would otherwise swap their session for the new account.
 */
export async function register(ctx: WebContext): Promise<Reply> {
  const { deps } = ctx;
  if (ctx.user !== null) return redirect('/', 303);
  await deps.accounts.fresh();
  // Refuse before the slow hash when registration is closed anyway.
  if (!ctx.registrationOpen()) return reply(closedPage(ctx), 403);
  const d = await deps.limiter.consume(`register-ip:${ctx.clientKey}`, REGISTER_IP_LIMIT_PER_MINUTE);
  if (!d.allowed)
    throw new HttpError('rate_limited', 'Too many registrations from this address; try again later.', {
      headers: { 'retry-after': String(d.retryAfterSec) },
    });
  const name = field(ctx.form, 'name').trim();
  const password = field(ctx.form, 'password');
  const problems = checkCredentials(name, password);
  if (password !== field(ctx.form, 'confirm')) problems.push('The two passwords differ.');
  if (problems.length > 0) return reply(registerPage(ctx, { name, problems }), 400);
  let user: User;
  try {
    user = await deps.accounts.register(name, password, deps.config.openRegistration);
  } catch (err) {
    if (!(err instanceof AccountError)) throw err;
    return err.kind === 'registration_closed'
      ? reply(closedPage(ctx), 403)
      : reply(registerPage(ctx, { name, problems: [err.message] }), statusOf(err));
  }
  return startSession(ctx, user, '/');
}

/**
 * POST /logout. Behind a sign-in proxy, AUTH_PROXY_LOGOUT_URL is the proxy's own sign-out:
 * without it, the proxy's next request would sign the user in here again at once. After a
 * sign-in at an OpenID provider, its own sign-out, so the next "Sign in with SSO" asks again.
 */
export async function logout(ctx: WebContext): Promise<Reply> {
  const { deps } = ctx;
  if (ctx.session !== null) await deps.sessions.destroy(ctx.session.id);
  ctx.setCookies.push(clearSessionCookie(ctx.secure));
  // Signed in at an OpenID provider: its end_session_endpoint, when it has one, signs out there too.
  let provider: string | null = null;
  if (deps.oidc !== null && ctx.cookies.has(oidcSignedInCookieName(ctx.secure))) {
    ctx.setCookies.push(clearOidcSignedInCookie(ctx.secure));
    provider = await deps.oidc.endSessionUrl(`${deps.config.baseUrl}/`);
  }
  const away = deps.config.authProxy?.logoutUrl ?? provider ?? '/';
  if (away.startsWith('/')) return redirect(away, 303);
  // CSP's form-action 'self' also holds for where a form's answer redirects, so a 303 to the
  // proxy's host would be blocked: the page goes there itself (Refresh), with a link besides.
  ctx.headers['refresh'] = `0; url=${away}`;
  ctx.user = null;
  ctx.session = null;
  const body = html`<section class="card narrow"><h1>Logged out</h1>\
<p>Signing you out of the sign-in service too: <a href="${away}">continue</a>.</p></section>`;
  return reply(page(ctx, 'Logged out', body));
}
