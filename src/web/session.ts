import type { User } from '../auth/records.ts';
import type { WebContext } from './context.ts';
import { clearSessionCookie, sessionCookie, sessionCookieName } from './session-cookies.ts';

/**
 * The session step: the logged-in user behind the session cookie, if any. Sets a renewed
 * cookie when the session's last use moved, and a deleting one when the cookie names no
 * live session (expired, logged out elsewhere, or its user was removed or disabled).
 */
export function resolveSession(ctx: WebContext): undefined | Promise<undefined> {
  const id = sessionIdOf(ctx);
  // Without a session cookie there is nothing to look up: the answer comes at once.
  if (id === null) return undefined;
  return sessionOf(ctx, id);
}

/** The session id the request's cookie names, or null; only a request with one waits for the accounts check. */
export function sessionIdOf(ctx: WebContext): string | null {
  const id = ctx.cookies.get(sessionCookieName(ctx.secure));
  return id === undefined || id === '' ? null : id;
}

async function sessionOf(ctx: WebContext, id: string): Promise<undefined> {
  const { deps } = ctx;
  const found = await deps.sessions.get(id);
  if (found === null) {
    ctx.setCookies.push(clearSessionCookie(ctx.secure));
    return undefined;
  }
  await deps.accounts.fresh();
  const user: User | undefined = deps.accounts.user(found.session.record.user_id);
  // A removed or disabled user's sessions end on their very next request (README, Users).
  if (user === undefined || user.disabled === true) {
    await deps.sessions.destroy(id);
    ctx.setCookies.push(clearSessionCookie(ctx.secure));
    return undefined;
  }
  if (found.touched) ctx.setCookies.push(sessionCookie(id, deps.config.sessionIdleMs, ctx.secure));
  ctx.session = found.session;
  ctx.user = user;
  return undefined;
}
