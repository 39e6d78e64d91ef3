import { sign } from '../../auth/server-key.ts';
import { clearSessionCookie, sessionCookie } from '../../auth/sessions.ts';
import { checkCredentials, PASSWORD_MAX_CHARS, registerUser, USER_NAME_MAX_CHARS, verifyLogin } from '../../auth/users.ts';
import type { AppDeps } from '../../deps.ts';
import { HttpError } from '../../http/errors.ts';
import { html as reply, redirect, type Reply } from '../../http/reply.ts';
import type { User } from '../../store/accounts.ts';
import { field, type WebContext } from '../context.ts';
import { chargeFailures } from '../failure-budget.ts';
import { csrfInput, notice, problemList } from '../forms.ts';
import { html, type SafeHtml } from '../html.ts';
import { LOGO, page } from '../layout.ts';

/** Failed login attempts allowed per account per minute, whoever makes them. */
export const LOGIN_USER_LIMIT_PER_MINUTE = 10;
/** Registrations allowed per client address per minute (each costs a slow hash). */
export const REGISTER_IP_LIMIT_PER_MINUTE = 10;

/**
 * Where to go after logging in: only a path on this site, never `//evil.example` or
 * `/\evil.example` (which browsers read as another host), so the form is no open redirect.
 */
export function safeNext(next: string): string {
  return /^\/(?![/\\])[\x21-\x7e]*$/.test(next) ? next : '/';
}

function authCard(ctx: WebContext, title: string, inner: SafeHtml): SafeHtml {
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
<div class="field"><label for="name">User name</label><input type="text" id="name" name="name" value="${opts.name ?? ''}" autocomplete="username" autocapitalize="none" spellcheck="false" required autofocus></div>
<div class="field"><label for="password">Password</label><input type="password" id="password" name="password" autocomplete="current-password" required></div>
<button class="btn btn-primary btn-block" type="submit">Log in</button>
</form>
<p class="center muted small">No account yet? <a href="/register">Register</a></p>`;
  return page(ctx, 'Log in', authCard(ctx, 'Log in', form));
}

/** GET /login */
export async function loginForm(ctx: WebContext): Promise<Reply> {
  const next = safeNext(field(ctx.query, 'next'));
  if (ctx.user !== null) return redirect(next);
  return reply(loginPage(ctx, { next }));
}

/**
 * The rate-limit key of an account's login budget. The typed name is keyed through an HMAC
 * (server key) rather than stored: the buckets are persisted, and a password typed into the
 * name box must not land on disk in clear, nor be cheap to test guesses against.
 */
const loginUserKey = (deps: AppDeps, name: string): string => `login-user:${sign(deps.sessions.serverKey, 'login-user', name.toLowerCase()).slice(0, 22)}`;

/** POST /login: rate-limited per address and per account (failures only), then a fresh session. */
export async function login(ctx: WebContext): Promise<Reply> {
  const { deps } = ctx;
  const name = field(ctx.form, 'name').trim();
  const password = field(ctx.form, 'password');
  const next = safeNext(field(ctx.form, 'next'));
  const again = (status: number, problem: string, typed: string, headers?: Record<string, string>): Reply =>
    reply(loginPage(ctx, { name: typed, next, problems: [problem] }), status, headers);

  // No account has such a name: refuse before any hashing or bucket, and do not echo it back.
  if (name === '' || name.length > USER_NAME_MAX_CHARS || password.length > PASSWORD_MAX_CHARS) return again(401, 'Wrong user name or password.', '');
  const budgets = [
    { key: `login-ip:${ctx.ip}`, limitPerMinute: deps.config.authFailLimitPerMinute },
    { key: loginUserKey(deps, name), limitPerMinute: LOGIN_USER_LIMIT_PER_MINUTE },
  ];
  const outcome = await chargeFailures(deps.limiter, budgets, () => verifyLogin(deps.accounts, name, password), (u) => u === null);
  if ('refused' in outcome) {
    const wait = outcome.refused.retryAfterSec;
    return again(429, `Too many login attempts. Wait ${wait} seconds and try again.`, name, { 'retry-after': String(wait) });
  }
  if (outcome.value === null) return again(401, 'Wrong user name or password.', name);
  return startSession(ctx, outcome.value, next);
}

async function startSession(ctx: WebContext, user: User, next: string): Promise<Reply> {
  const { deps } = ctx;
  // A new id at every login, so an id planted before the login (fixation) is worth nothing.
  if (ctx.session !== null) await deps.sessions.destroy(ctx.session.id);
  const session = await deps.sessions.create(user.id);
  const cookie = sessionCookie(session.id, deps.config.sessionIdleMs, ctx.secure);
  return { ...redirect(next, 303), headers: { 'set-cookie': cookie } };
}

const registrationOpen = (deps: AppDeps): boolean => deps.config.openRegistration || deps.accounts.users.length === 0;

function registerPage(ctx: WebContext, opts: { name?: string; problems?: string[] } = {}): string {
  const first = ctx.deps.accounts.users.length === 0;
  const form = html`${first ? notice('info', 'You are the first user here, so your account will be the admin account.') : ''}
${problemList(opts.problems ?? [])}
<form method="post" action="/register">
${csrfInput(ctx.csrf())}
<div class="field"><label for="name">User name</label><input type="text" id="name" name="name" value="${opts.name ?? ''}" autocomplete="username" autocapitalize="none" spellcheck="false" maxlength="32" required autofocus><span class="hint">Letters, digits, ".", "_" and "-"; up to 32.</span></div>
<div class="field"><label for="password">Password</label><input type="password" id="password" name="password" autocomplete="new-password" minlength="8" required><span class="hint">At least 8 characters.</span></div>
<div class="field"><label for="confirm">Repeat the password</label><input type="password" id="confirm" name="confirm" autocomplete="new-password" minlength="8" required></div>
<button class="btn btn-primary btn-block" type="submit">Create account</button>
</form>
<p class="center muted small">Already registered? <a href="/login">Log in</a></p>`;
  return page(ctx, 'Register', authCard(ctx, 'Create an account', form));
}

function closedPage(ctx: WebContext): string {
  return page(ctx, 'Registration closed', authCard(ctx, 'Registration is closed', html`<p class="center muted">New accounts are created by an admin on this server. If you already have one, <a href="/login">log in</a>.</p>`));
}

/** GET /register */
export async function registerForm(ctx: WebContext): Promise<Reply> {
  if (ctx.user !== null) return redirect('/');
  await ctx.deps.accounts.fresh();
  return reply(registrationOpen(ctx.deps) ? registerPage(ctx) : closedPage(ctx));
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
  if (!registrationOpen(deps)) return reply(closedPage(ctx), 403);
  const d = deps.limiter.consume(`register-ip:${ctx.ip}`, REGISTER_IP_LIMIT_PER_MINUTE);
  if (!d.allowed) throw new HttpError('rate_limited', 'Too many registrations from this address; try again later.', { headers: { 'retry-after': String(d.retryAfterSec) } });
  const name = field(ctx.form, 'name').trim();
  const password = field(ctx.form, 'password');
  const problems = checkCredentials(name, password);
  if (password !== field(ctx.form, 'confirm')) problems.push('The two passwords differ.');
  if (problems.length > 0) return reply(registerPage(ctx, { name, problems }), 400);
  let user: User;
  try {
    user = await registerUser(deps.accounts, name, password, deps.config.openRegistration, deps.now());
  } catch (err) {
    if (!(err instanceof HttpError)) throw err;
    return err.status === 403 ? reply(closedPage(ctx), 403) : reply(registerPage(ctx, { name, problems: [err.message] }), err.status);
  }
  return startSession(ctx, user, '/');
}

/** POST /logout */
export async function logout(ctx: WebContext): Promise<Reply> {
  if (ctx.session !== null) await ctx.deps.sessions.destroy(ctx.session.id);
  return { ...redirect('/', 303), headers: { 'set-cookie': clearSessionCookie(ctx.secure) } };
}
