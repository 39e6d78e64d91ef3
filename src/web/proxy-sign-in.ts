import { USER_NAME_RE } from '../auth/accounts.ts';
import { userViewer } from '../auth/viewer.ts';
import type { AuthProxyConfig } from '../config/auth-proxy.ts';
import { HttpError } from '../http/errors.ts';
import { TrustedPeers } from '../http/trusted-peers.ts';
import type { Actor } from '../log/audit.ts';
import type { Step } from '../pipeline/run.ts';
import type { WebContext } from './context.ts';
import { createWithoutPassword, followGroup, startSession } from './external-sign-in.ts';

/** The value of a request header as one string ('' when absent; repeated ones joined, as Node joins them). */
const headerOf = (ctx: WebContext, name: string): string => {
  const v = ctx.req.headers[name];
  return (Array.isArray(v) ? v.join(', ') : (v ?? '')).trim();
};

/** The user name the proxy header carries on this request, or null when it carries none. */
export const proxyUserOf = (ctx: WebContext, proxy: AuthProxyConfig | null): string | null =>
  proxy === null ? null : headerOf(ctx, proxy.header) || null;

/**
 * The sign-in step behind a trusted proxy (README, Sign-in by a proxy). A request whose TCP
 * peer (never X-Forwarded-For, which anyone can write) is one of AUTH_PROXY_TRUSTED and which
 * carries the header is signed in as that user. The first such request makes a real session
 * and sets its cookie, as a password login does, so the session's CSRF token holds from page
 * to form; later ones reuse it while the header names the same user. From any other peer the
 * header is ignored, and said once in the server log.
 */
export function proxySignIn(proxy: AuthProxyConfig, warn: (message: string) => void): Step<WebContext> {
  const trusted = new TrustedPeers(proxy.trusted);
  let warned = false;
  return (ctx) => {
    const name = proxyUserOf(ctx, proxy);
    if (name === null) return undefined;
    const peer = ctx.req.socket.remoteAddress;
    if (!trusted.has(peer)) {
      if (!warned) {
        warned = true;
        warn(
          `the ${proxy.header} header came from ${peer ?? 'an unknown address'}, not from AUTH_PROXY_TRUSTED: ` +
            'ignored (said once; later ones are ignored silently)',
        );
      }
      return undefined;
    }
    return signIn(ctx, proxy, name, peer ?? '');
  };
}

async function signIn(ctx: WebContext, proxy: AuthProxyConfig, name: string, peer: string): Promise<undefined> {
  const { deps } = ctx;
  // Only names the CLI would accept: anything else is no account here, and never created.
  if (!USER_NAME_RE.test(name))
    throw new HttpError('forbidden', 'The sign-in in front of this server named a user this server cannot have.');
  const actor: Actor = { via: 'web', user_id: null, name: 'auth proxy', ip: peer };
  await deps.accounts.fresh();
  let user =
    deps.accounts.userByName(name) ??
    (proxy.create
      ? await createWithoutPassword(deps.accounts, name, isMember(ctx, proxy) ? 'admin' : 'user', actor)
      : undefined);
  if (user === undefined)
    throw new HttpError('forbidden', `There is no account "${name}" here. Ask an admin to create it.`);
  if (user.disabled === true) throw new HttpError('forbidden', 'This account is disabled. Ask an admin to enable it.');
  if (proxy.adminGroup !== null) user = await followGroup(deps.accounts, user, isMember(ctx, proxy), actor);
  if (ctx.user?.id === user.id) {
    ctx.user = user;
    ctx.viewer = userViewer(user);
  }
  // Another user's session (or none): the proxy decides who this is now.
  else await startSession(ctx, user);
  return undefined;
}

const isMember = (ctx: WebContext, proxy: AuthProxyConfig): boolean =>
  proxy.adminGroup !== null &&
  headerOf(ctx, proxy.groupsHeader)
    .split(',')
    .some((g) => g.trim() === proxy.adminGroup);
