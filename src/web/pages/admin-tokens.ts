import { allowedScopes } from '../../auth/accounts.ts';
import { AccountError } from '../../auth/errors.ts';
import { HttpError } from '../../http/errors.ts';
import { statusOf } from '../../pipeline/refusal.ts';
import { html as reply, redirect, type Reply } from '../../http/reply.ts';
import type { TokenRecord } from '../../store/accounts.ts';
import { field, type WebContext } from '../context.ts';
import { csrfInput, notice, problemList } from '../forms.ts';
import { html, isolate, type SafeHtml } from '../html.ts';
import { page } from '../layout.ts';
import { timeTag } from '../time.ts';
import { rateFrom, scopeBoxes, scopesFrom, tokenFormProblems } from '../token-form.ts';

/** The admin area's two tabs (README, Web pages: "API Tokens" and "API Logs"). */
export function adminTabs(current: 'tokens' | 'logs'): SafeHtml {
  const tab = (href: string, name: typeof current, label: string): SafeHtml =>
    html`<a href="${href}"${current === name ? html` aria-current="page"` : ''}>${label}</a>`;
  return html`<div class="page-head"><h1>Admin</h1></div><nav class="tabs" aria-label="Admin">${tab('/admin/tokens', 'tokens', 'API Tokens')}${tab('/admin/logs', 'logs', 'API Logs')}</nav>`;
}

function tokenRow(ctx: WebContext, t: TokenRecord): SafeHtml {
  const now = ctx.deps.now();
  const owner = ctx.deps.accounts.user(t.user_id);
  const used = ctx.deps.tokenUsage.get(t.id);
  const allowed = owner === undefined ? [] : allowedScopes(owner);
  return html`<tr id="token-${t.id}">
<td class="full" data-label="Token"><span class="title-cell">${t.label === '' ? 'Unlabelled token' : isolate(t.label)}</span><br><span class="mono muted">${t.id}</span></td>
<td data-label="User"><span>${owner === undefined ? '?' : isolate(owner.name)}${owner?.role === 'admin' ? html` <span class="badge badge-warn">admin</span>` : ''}<br><span class="muted small">id ${t.user_id}</span></span></td>
<td data-label="Last used"><span>${used === undefined ? html`<span class="muted">never</span>` : timeTag(used, now)}<br><span class="muted small">created ${timeTag(t.created_at, now)}</span></span></td>
<td class="full" data-label="Scopes and rate limit"><form method="post" action="/admin/tokens" class="inline-form">
${csrfInput(ctx.csrf())}<input type="hidden" name="id" value="${t.id}">
${scopeBoxes(allowed, t.scopes, `t-${t.id}`)}
<label class="check" for="rate-${t.id}">Rate <input type="number" id="rate-${t.id}" name="rate" min="0" max="999999999" value="${t.rate_limit_per_minute}" inputmode="numeric"> /min</label>
<button class="btn btn-sm" type="submit">Save</button>
</form></td>
</tr>`;
}

function tokensPage(ctx: WebContext, s: { problems?: string[]; message?: string }, status = 200): Reply {
  const tokens = [...ctx.deps.accounts.tokens].sort((a, b) => b.created_at - a.created_at);
  const body = html`${adminTabs('tokens')}
${s.message === undefined ? '' : notice('ok', s.message)}
${problemList(s.problems ?? [])}
<section class="card">
<div class="card-head"><h2>All API tokens</h2><span class="muted small">${tokens.length} in all · rate 0 = unlimited · the admin scope only for admin users' tokens</span></div>
${tokens.length === 0
  ? html`<p class="empty">No tokens exist yet.</p>`
  : html`<div class="table-wrap"><table class="stack"><thead><tr><th>Token</th><th>User</th><th>Used</th><th>Scopes and rate limit</th></tr></thead><tbody>${tokens.map((t) => tokenRow(ctx, t))}</tbody></table></div>`}
</section>`;
  return reply(page(ctx, 'API Tokens · Admin', body), status);
}

/** GET /admin/tokens */
export async function adminTokens(ctx: WebContext): Promise<Reply> {
  await ctx.deps.accounts.fresh();
  // Only a real token id is echoed back, so the message cannot be made to say anything else.
  const saved = ctx.deps.accounts.token(field(ctx.query, 'saved'));
  return tokensPage(ctx, saved === undefined ? {} : { message: `Token ${saved.id} was updated.` });
}

/** POST /admin/tokens: sets one token's scopes and rate limit. */
export async function adminTokenUpdate(ctx: WebContext): Promise<Reply> {
  const { accounts } = ctx.deps;
  await accounts.fresh();
  const id = field(ctx.form, 'id');
  const t = accounts.token(id);
  if (t === undefined) throw new HttpError('not_found', 'There is no such token.');
  const owner = accounts.user(t.user_id);
  const problems = tokenFormProblems(ctx.form, owner === undefined ? [] : allowedScopes(owner), false);
  if (problems.length > 0) return tokensPage(ctx, { problems }, 400);
  try {
    await accounts.updateToken(id, scopesFrom(ctx.form), rateFrom(ctx.form));
  } catch (err) {
    // The token or its owner changed between the check above and the locked write.
    if (!(err instanceof AccountError)) throw err;
    return tokensPage(ctx, { problems: [err.message] }, statusOf(err));
  }
  return redirect(`/admin/tokens?saved=${encodeURIComponent(id)}#token-${encodeURIComponent(id)}`, 303);
}
