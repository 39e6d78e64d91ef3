import { clearSessionCookie, secureCookies, sessionCookie } from '../auth/sessions.ts';
import type { AppDeps } from '../deps.ts';
import type { User } from '../store/accounts.ts';
import type { Session } from '../store/sessions.ts';

export interface WebAuth {
  session: Session;
  user: User;
}

/**
 * The logged-in user behind a session cookie, plus the Set-Cookie headers the answer needs:
 * a renewed cookie when the session's last use moved, a deleting one when the cookie names
 * no live session (expired, logged out elsewhere, or its user was removed).
 */
export async function resolveSession(deps: AppDeps, id: string | undefined): Promise<{ auth: WebAuth | null; cookies: string[] }> {
  if (id === undefined || id === '') return { auth: null, cookies: [] };
  const secure = secureCookies(deps.config.baseUrl);
  const found = await deps.sessions.get(id);
  if (found === null) return { auth: null, cookies: [clearSessionCookie(secure)] };
  await deps.accounts.fresh();
  const user = deps.accounts.user(found.session.record.user_id);
  if (user === undefined) {
    await deps.sessions.destroy(id);
    return { auth: null, cookies: [clearSessionCookie(secure)] };
  }
  const cookies = found.touched ? [sessionCookie(id, deps.config.sessionIdleMs, secure)] : [];
  return { auth: { session: found.session, user }, cookies };
}
