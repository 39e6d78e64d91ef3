import { checkPassword } from '../../auth/accounts.ts';
import { hashPassword } from '../../crypto/passwords.ts';
import { html as reply, redirect, type Reply } from '../../http/reply.ts';
import { actorOf, field, userOf, type WebContext } from '../context.ts';
import { csrfInput, notice, problemList } from '../forms.ts';
import { html } from '../html.ts';
import { page } from '../layout.ts';
import { sizeLabel } from '../size-label.ts';

/** The account page, where a user changes their own password (README, Web pages: Your account). */
export const ACCOUNT_PATH = '/account';

interface AccountState {
  problems?: string[];
  changed?: boolean;
}

async function accountPage(ctx: WebContext, s: AccountState, status = 200): Promise<Reply> {
  const user = userOf(ctx);
  const used = await ctx.deps.pastes.usedBytes(user.id);
  const quota = ctx.deps.pastes.fileLimits.userQuotaBytes;
  const temporary = user.password_temporary === true;
  const form =
    user.password === null
      ? html`<p class="muted">Your account has no password here: you sign in another way (an API token, or the sign-in \
in front of this server).</p>`
      : html`<form method="post" action="${ACCOUNT_PATH}">
${csrfInput(ctx.csrf())}
<div class="field"><label for="current">Current password</label><input type="password" id="current" name="current" \
autocomplete="current-password" required${temporary ? html` autofocus` : ''}></div>
<div class="field"><label for="password">New password</label><input type="password" id="password" name="password" \
autocomplete="new-password" minlength="8" required><span class="hint">At least 8 characters.</span></div>
<div class="field"><label for="confirm">Repeat the new password</label><input type="password" id="confirm" \
name="confirm" autocomplete="new-password" minlength="8" required></div>
<button class="btn btn-primary" type="submit">Change password</button>
</form>`;
  const body = html`<section class="card narrow">
<h1>Your account</h1>
<p class="muted">Signed in as <strong>${user.name}</strong>${user.role === 'admin' ? ' (admin)' : ''}.</p>
${
  temporary
    ? notice('warn', 'Your password is a temporary one an admin gave you. Choose your own before you go on.')
    : ''
}
${
  s.changed === true ? notice('ok', 'Your password was changed. Your other sessions have ended; this one goes on.') : ''
}
${problemList(s.problems ?? [])}
<h2>Files</h2>
<p id="file-quota">Your pastes' files take <strong>${sizeLabel(used)}</strong> of your \
<strong>${sizeLabel(quota)}</strong> (${Math.min(100, Math.floor((used / quota) * 100))}%).</p>
<progress class="quota" value="${String(Math.min(used, quota))}" max="${String(quota)}" \
aria-labelledby="file-quota"></progress>
<h2>Change password</h2>
${form}
</section>`;
  return reply(page(ctx, 'Your account', body), status);
}

/** GET /account */
export async function account(ctx: WebContext): Promise<Reply> {
  await ctx.deps.accounts.fresh();
  return accountPage(ctx, { changed: field(ctx.query, 'changed') === '1' });
}

/**
 * POST /account: a new password, with the current one. The new one follows registration's
 * rules; a wrong current one spends the login failure budgets (auth/authenticate.ts), so
 * the form is no way around them. Every other session of the user ends; this one stays.
 */
export async function changePassword(ctx: WebContext): Promise<Reply> {
  const { deps } = ctx;
  const user = userOf(ctx);
  const current = field(ctx.form, 'current');
  const password = field(ctx.form, 'password');
  if (user.password === null) return accountPage(ctx, { problems: ['This account has no password to change.'] }, 400);
  // The cheap checks first: a new password that would be refused costs no slow hash.
  const problems = checkPassword(password);
  if (password !== field(ctx.form, 'confirm')) problems.push('The two new passwords differ.');
  if (problems.length === 0 && password === current)
    problems.push('The new password must differ from the current one.');
  if (problems.length > 0) return accountPage(ctx, { problems }, 400);
  const outcome = await deps.authenticator.login(user.name, current, ctx.clientKey);
  if ('refused' in outcome) {
    ctx.headers['retry-after'] = String(outcome.refused.retryAfterSec);
    const wait = outcome.refused.retryAfterSec;
    return accountPage(ctx, { problems: [`Too many wrong passwords. Wait ${wait} seconds and try again.`] }, 429);
  }
  if (!('user' in outcome) || outcome.user.id !== user.id)
    return accountPage(ctx, { problems: ['The current password is wrong.'] }, 403);
  await deps.accounts.changeOwnPassword(user.id, await hashPassword(password), actorOf(ctx));
  if (ctx.session !== null) await deps.sessions.endOthers(user.id, ctx.session.id);
  return redirect(`${ACCOUNT_PATH}?changed=1`, 303);
}
