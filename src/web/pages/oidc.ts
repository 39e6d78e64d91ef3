import { USER_NAME_RE } from '../../auth/accounts.ts';
import { AccountError } from '../../auth/errors.ts';
import type { User } from '../../auth/records.ts';
import { HttpError, type ErrorCode } from '../../http/errors.ts';
import { redirect, type Reply } from '../../http/reply.ts';
import type { Actor } from '../../log/audit.ts';
import { field, type WebContext } from '../context.ts';
import { createWithoutPassword, followGroup, startSession } from '../external-sign-in.ts';
import { OidcRefusal, type OidcClient } from '../oidc-client.ts';
import {
  clearOidcFlowCookie,
  oidcFlowCookie,
  oidcFlowCookieName,
  oidcSignedInCookie,
  openOidcFlow,
} from '../oidc-flow.ts';
import { safeNext } from './account.ts';
import { errorReply } from './error.ts';

const STATUS: Record<OidcRefusal['reason'] | Refused['reason'], ErrorCode> = {
  provider_error: 'forbidden',
  no_flow: 'bad_request',
  state: 'bad_request',
  token: 'forbidden',
  unreachable: 'unavailable',
  bad_name: 'forbidden',
  no_account: 'forbidden',
  linked_elsewhere: 'forbidden',
  disabled: 'forbidden',
};

/** A sign-in the accounts refuse, once the provider vouched for the user. */
class Refused extends Error {
  constructor(
    readonly reason: 'bad_name' | 'no_account' | 'linked_elsewhere' | 'disabled',
    message: string,
    readonly user: string,
  ) {
    super(message);
  }
}

const clientOf = (ctx: WebContext): OidcClient => {
  if (ctx.deps.oidc === null) throw new Error('the OpenID Connect routes are served only with OIDC_ISSUER');
  return ctx.deps.oidc;
};

/** The sign-ins the provider vouches for, as the audit log names them (as `auth proxy` for the proxy's). */
const actorOf = (ctx: WebContext): Actor => ({ via: 'web', user_id: null, name: 'openid connect', ip: ctx.ip });

/** GET /login/oidc: a new flow, sealed in its cookie, and off to the provider. */
export async function oidcStart(ctx: WebContext): Promise<Reply> {
  const next = safeNext(field(ctx.query, 'next'));
  if (ctx.user !== null) return redirect(next);
  const oidc = clientOf(ctx);
  try {
    const { url, flow } = await oidc.start(next);
    ctx.setCookies.push(oidcFlowCookie(oidc.key, flow, ctx.secure));
    return redirect(url);
  } catch (err) {
    if (!(err instanceof OidcRefusal)) throw err;
    return refuse(ctx, err.reason, err.message, err.detail, null);
  }
}

/**
 * GET /login/oidc/callback (README, Sign-in with OpenID Connect): the flow's cookie is
 * spent whatever the outcome; an error from the provider, a missing or forged state, and an
 * ID token that fails a check are each refused with a page and an audit line.
 */
export async function oidcCallback(ctx: WebContext): Promise<Reply> {
  const oidc = clientOf(ctx);
  const { deps } = ctx;
  ctx.setCookies.push(clearOidcFlowCookie(ctx.secure));
  const error = field(ctx.query, 'error');
  if (error !== '') {
    const said = field(ctx.query, 'error_description');
    return refuse(
      ctx,
      'provider_error',
      `The sign-in provider refused the sign-in: ${error}${said === '' ? '' : ` (${said})`}.`,
      error.slice(0, 200),
      null,
    );
  }
  const flow = openOidcFlow(oidc.key, ctx.cookies.get(oidcFlowCookieName(ctx.secure)), deps.now());
  if (flow === null)
    return refuse(ctx, 'no_flow', 'This sign-in has expired or was already used. Start again.', '', null);
  if (field(ctx.query, 'state') !== flow.state)
    return refuse(ctx, 'state', 'This sign-in does not match the one started here. Start again.', '', null);
  try {
    const url = new URL(`${oidc.redirectUri}${ctx.rawQuery === '' ? '' : `?${ctx.rawQuery}`}`);
    const claims = await oidc.finish(url, flow);
    const user = await accountOf(ctx, oidc, claims);
    await startSession(ctx, user);
    ctx.setCookies.push(oidcSignedInCookie(deps.config.sessionIdleMs, ctx.secure));
    return redirect(flow.next, 303);
  } catch (err) {
    if (err instanceof OidcRefusal) return refuse(ctx, err.reason, err.message, err.detail, null);
    if (err instanceof Refused) return refuse(ctx, err.reason, err.message, '', err.user);
    throw err;
  }
}

/**
 * The account the provider's user signs in to: the one linked to its `sub`, else the one
 * the user name claim names (made with OIDC_CREATE), which is linked now; an account linked
 * to another `sub` is refused, so neither a rename at the provider nor a second user
 * claiming the name takes it over. Then the admin group decides the role.
 */
async function accountOf(ctx: WebContext, oidc: OidcClient, claims: Record<string, unknown>): Promise<User> {
  const { accounts } = ctx.deps;
  const { usernameClaim, groupsClaim, adminGroup, create } = oidc.config;
  const actor = actorOf(ctx);
  const issuer = String(claims['iss']);
  const subject = String(claims['sub']);
  const claimed = claims[usernameClaim];
  const name = typeof claimed === 'string' ? claimed : '';
  const groups = claims[groupsClaim];
  const member =
    adminGroup !== null &&
    (Array.isArray(groups) ? groups.includes(adminGroup) : typeof groups === 'string' && groups === adminGroup);
  await accounts.fresh();
  let user = accounts.userBySubject(issuer, subject);
  if (user === undefined) {
    if (!USER_NAME_RE.test(name))
      throw new Refused(
        'bad_name',
        `The sign-in provider named a user this server cannot have (its ${usernameClaim} claim must be 1-32 ` +
          'letters, digits, ".", "_" or "-").',
        '',
      );
    user =
      accounts.userByName(name) ??
      (create ? await createWithoutPassword(accounts, name, member ? 'admin' : 'user', actor) : undefined);
    if (user === undefined)
      throw new Refused('no_account', `There is no account "${name}" here. Ask an admin to create it.`, name);
    if (user.disabled === true) throw new Refused('disabled', DISABLED, user.name);
    try {
      user = await accounts.linkSubject(user.id, issuer, subject, actor);
    } catch (err) {
      if (!(err instanceof AccountError) || err.kind !== 'linked_elsewhere') throw err;
      throw new Refused(
        'linked_elsewhere',
        `The account "${user.name}" belongs to another user of the sign-in provider. Ask an admin if this is ` +
          'your account.',
        user.name,
      );
    }
  }
  if (user.disabled === true) throw new Refused('disabled', DISABLED, user.name);
  return adminGroup === null ? user : followGroup(accounts, user, member, actor);
}

const DISABLED = 'This account is disabled. Ask an admin to enable it.';

/** Refusals audited per client address a minute: anyone can call the callback, and each line is a durable write. */
export const OIDC_REFUSALS_AUDITED_PER_MINUTE = 30;

/** The refusal's page (escaped, as every page) and its audit line, within the client's budget of them. */
async function refuse(
  ctx: WebContext,
  reason: keyof typeof STATUS,
  message: string,
  detail: string,
  name: string | null,
): Promise<Reply> {
  const { deps } = ctx;
  const budget = await deps.limiter.consume(`oidc-refused:${ctx.clientKey}`, OIDC_REFUSALS_AUDITED_PER_MINUTE);
  if (budget.allowed)
    await deps.accounts.audit?.record(actorOf(ctx), {
      action: 'oidc.refused',
      target: name === null ? 'oidc' : `user:${name}`,
      before: null,
      after: { reason, detail },
    });
  return errorReply(ctx, new HttpError(STATUS[reason], message), message);
}
