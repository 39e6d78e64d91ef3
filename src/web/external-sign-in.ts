import type { Accounts } from '../auth/accounts.ts';
import { AccountError } from '../auth/errors.ts';
import type { User } from '../auth/records.ts';
import { userViewer } from '../auth/viewer.ts';
import type { Actor } from '../log/audit.ts';
import type { WebContext } from './context.ts';
import { sessionCookie } from './session-cookies.ts';

// What a sign-in vouched for elsewhere (a trusted proxy, web/proxy-sign-in.ts; an OpenID
// provider, web/pages/oidc.ts) does here alike: make the user, follow its group, start its session.

/**
 * AUTH_PROXY_CREATE, OIDC_CREATE: the user, made on first sight without a password (no password sign-in until given
 * one).
 */
export async function createWithoutPassword(
  accounts: Accounts,
  name: string,
  role: User['role'],
  actor: Actor,
): Promise<User> {
  try {
    return await accounts.addUser(name, role, null, actor);
  } catch (err) {
    // Two first sign-ins at once: the other one made it.
    if (!(err instanceof AccountError) || err.kind !== 'name_taken') throw err;
    await accounts.fresh();
    const made = accounts.userByName(name);
    if (made === undefined) throw err;
    return made;
  }
}

/**
 * With an admin group, the group decides the role at every sign-in: a member is made admin,
 * anyone else is not (except the last enabled admin, whom the accounts keep).
 */
export async function followGroup(accounts: Accounts, user: User, member: boolean, actor: Actor): Promise<User> {
  const role = member ? 'admin' : 'user';
  if (user.role === role) return user;
  try {
    return await accounts.setRole(user.name, role, actor);
  } catch (err) {
    if (!(err instanceof AccountError) || err.kind !== 'last_admin') throw err;
    return user;
  }
}

/**
 * A new session for `user`, as a password login makes it (the per-user cap included): any
 * other session this browser held ends, so an id planted before the sign-in is worth nothing.
 */
export async function startSession(ctx: WebContext, user: User): Promise<void> {
  const { deps } = ctx;
  if (ctx.session !== null) await deps.sessions.destroy(ctx.session.id);
  const session = await deps.sessions.create(user.id);
  ctx.setCookies.push(sessionCookie(session.id, deps.config.sessionIdleMs, ctx.secure));
  await deps.accounts.recordLogin(user.id);
  ctx.session = session;
  ctx.user = user;
  ctx.viewer = userViewer(user);
}
