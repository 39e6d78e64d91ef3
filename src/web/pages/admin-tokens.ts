import { allowedScopes, type TokenLimits } from '../../auth/accounts.ts';
import { AccountError } from '../../auth/errors.ts';
import { HttpError } from '../../http/errors.ts';
import { statusOf } from '../../pipeline/refusal.ts';
import { html as reply, redirect, type Reply } from '../../http/reply.ts';
import type { TokenRecord } from '../../auth/records.ts';
import { PRIVACIES } from '../../paste/paste.ts';
import { actorOf, field, type WebContext } from '../context.ts';
import { csrfInput, notice, problemList } from '../forms.ts';
import { html, isolate, type SafeHtml } from '../html.ts';
import { page } from '../layout.ts';
import { rateFrom, scopeBoxes, scopesFrom, tokenFormProblems } from '../token-form.ts';
import { TOKEN_LIFETIMES } from './api-keys.ts';

/** The admin area's tabs (README, Web pages: "API Tokens", "API Logs", "Users", "Audit"). */
export function adminTabs(current: 'tokens' | 'logs' | 'users' | 'audit'): SafeHtml {
  const tab = (href: string, name: typeof current, label: string): SafeHtml =>
    html`<a href="${href}"${current === name ? html` aria-current="page"` : ''}>${label}</a>`;
  const tabs = [
    tab('/admin/tokens', 'tokens', 'API Tokens'),
    tab('/admin/logs', 'logs', 'API Logs'),
    tab('/admin/users', 'users', 'Users'),
    tab('/admin/audit', 'audit', 'Audit'),
  ];
  return html`<div class="page-head"><h1>Admin</h1></div><nav class="tabs" aria-label="Admin">${tabs}</nav>`;
}

export const TOKENS_PAGE_SIZE = 25;

/** The tokens whose user name or label contains `q` (any case), newest first. */
function matching(ctx: WebContext, q: string): TokenRecord[] {
  const needle = q.toLowerCase();
  const hit = (t: TokenRecord): boolean =>
    needle === '' ||
    t.label.toLowerCase().includes(needle) ||
    (ctx.deps.accounts.user(t.user_id)?.name.toLowerCase().includes(needle) ?? false) ||
    t.id === q;
  return ctx.deps.accounts.tokens.filter(hit).sort((a, b) => b.created_at - a.created_at);
}

/** A link to the token list with the search and page kept. */
function listLink(q: string, pageNo: number): string {
  const params = new URLSearchParams();
  if (q !== '') params.set('q', q);
  if (pageNo > 1) params.set('page', String(pageNo));
  const s = params.toString();
  return s === '' ? '/admin/tokens' : `/admin/tokens?${s}`;
}

/** The select's first option: the token's expiry as it stands. */
function expiryText(at: number | null, now: number): string {
  if (at === null) return 'never (keep)';
  return `${at <= now ? 'expired' : 'on'} ${new Date(at).toISOString().slice(0, 10)} (keep)`;
}

/** The limits the form sets: a size in KiB (blank: none), the ticked privacies (all: any), a new expiry. */
function limitsFrom(ctx: WebContext): TokenLimits | string {
  // The row's form says it carries the limits (unticked boxes are not sent at all); a form
  // without them changes scopes and rate only.
  if (field(ctx.form, 'limits') !== '1') return {};
  const kib = field(ctx.form, 'max_kib').trim();
  if (kib !== '' && !/^\d{1,5}$/.test(kib)) return 'The largest paste must be a whole number of KiB (blank for any).';
  const privacies = PRIVACIES.filter((p) => field(ctx.form, `privacy_${p}`) === '1');
  if (privacies.length === 0) return 'Tick at least one privacy the token may use.';
  const expires = field(ctx.form, 'expires') || 'keep';
  if (expires !== 'keep' && !TOKEN_LIFETIMES.some(([v]) => v === expires))
    return 'Choose when the token expires from the list.';
  return {
    maxPasteBytes: kib === '' || Number(kib) === 0 ? null : Number(kib) * 1024,
    privacies: privacies.length === PRIVACIES.length ? null : privacies,
    ...(expires === 'keep'
      ? {}
      : { expiresAt: expires === '0' ? null : ctx.deps.now() + Number(expires) * 86_400_000 }),
  };
}

function tokenRow(ctx: WebContext, t: TokenRecord): SafeHtml {
  const { times } = ctx.deps;
  const now = ctx.deps.now();
  const owner = ctx.deps.accounts.user(t.user_id);
  const used = ctx.deps.tokenUsage.get(t.id);
  const lastDay = ctx.deps.tokenUsage.lastDay(t.id, now);
  const allowed = owner === undefined ? [] : allowedScopes(owner);
  return html`<tr id="token-${t.id}">
<td class="full" data-label="Token"><span class="title-cell">${
    t.label === '' ? 'Unlabelled token' : isolate(t.label)
  }</span><br><span class="mono muted">${t.id}</span></td>
<td data-label="User"><span>${owner === undefined ? '?' : isolate(owner.name)}${
    owner?.role === 'admin' ? html` <span class="badge badge-warn">admin</span>` : ''
  }<br><span class="muted small">id ${t.user_id}</span></span></td>
<td data-label="Used"><span>${
    used === undefined ? html`<span class="muted">never</span>` : times.tag(used, now)
  }<br><span class="muted small" data-requests-24h="${lastDay}">${lastDay} requests in 24 h</span><br>\
<span class="muted small">created ${times.tag(t.created_at, now)}</span></span></td>
<td class="full" data-label="Scopes, rate and limits"><form method="post" action="/admin/tokens" class="inline-form">
${csrfInput(ctx.csrf())}<input type="hidden" name="id" value="${t.id}"><input type="hidden" name="limits" value="1">
${scopeBoxes(allowed, t.scopes, `t-${t.id}`)}
<label class="check" for="rate-${t.id}">Rate <input type="number" id="rate-${t.id}" name="rate" min="0" \
max="999999999" value="${t.rate_limit_per_minute}" inputmode="numeric"> /min</label>
<label class="check" for="max-${t.id}">Largest paste <input type="number" id="max-${t.id}" name="max_kib" min="1" \
max="65536" value="${
    t.max_paste_bytes === undefined || t.max_paste_bytes === null ? '' : String(Math.round(t.max_paste_bytes / 1024))
  }" placeholder="any" inputmode="numeric"> KiB</label>
<span class="check">Privacies ${PRIVACIES.map(
    (p) =>
      html`<label class="check" for="pv-${t.id}-${p}"><input type="checkbox" id="pv-${t.id}-${p}" name="privacy_${p}" \
value="1"${
        t.privacies === undefined || t.privacies === null || t.privacies.includes(p) ? html` checked` : ''
      }> ${p}</label>`,
  )}</span>
<label class="check" for="exp-${t.id}">Expires <select id="exp-${t.id}" name="expires">\
<option value="keep" selected>${expiryText(
    t.expires_at ?? null,
    now,
  )}</option><option value="0">never</option>${TOKEN_LIFETIMES.filter(([v]) => v !== '0').map(
    ([v, l]) => html`<option value="${v}">in ${l}</option>`,
  )}</select></label>
<button class="btn btn-sm" type="submit">Save</button>
<a class="btn btn-sm btn-ghost" href="/admin/tokens?revoke=${t.id}#revoke">Revoke</a>
</form></td>
</tr>`;
}

function tokensPage(
  ctx: WebContext,
  s: { problems?: string[]; message?: string; revoking?: TokenRecord },
  status = 200,
): Reply {
  const q = field(ctx.query, 'q').trim().slice(0, 100);
  const all = matching(ctx, q);
  const pages = Math.max(1, Math.ceil(all.length / TOKENS_PAGE_SIZE));
  const n = Number(field(ctx.query, 'page') || '1');
  const pageNo = Number.isSafeInteger(n) && n >= 1 ? Math.min(n, pages) : 1;
  const tokens = all.slice((pageNo - 1) * TOKENS_PAGE_SIZE, pageNo * TOKENS_PAGE_SIZE);
  const asking = s.revoking;
  const owner = asking === undefined ? undefined : ctx.deps.accounts.user(asking.user_id);
  const body = html`${adminTabs('tokens')}
${s.message === undefined ? '' : notice('ok', s.message)}
${
  asking === undefined
    ? ''
    : html`<section class="card" id="revoke"><div class="alert alert-warn"><strong>Revoke token ${asking.id}${
        owner === undefined ? '' : html` of ${isolate(owner.name)}`
      }?</strong> Every script using it stops working at once, and it cannot be brought back.</div>
<form method="post" action="/admin/tokens" class="row-actions">${csrfInput(ctx.csrf())}<input type="hidden" \
name="action" value="revoke"><input type="hidden" name="id" value="${asking.id}"><button class="btn btn-danger" \
type="submit">Revoke it</button><a class="btn" href="/admin/tokens">Keep it</a></form></section>`
}
${problemList(s.problems ?? [])}
<section class="card">
<div class="card-head"><h2>All API tokens</h2><span class="muted small">${all.length} ${q === '' ? 'in all' : 'found'} \
· rate 0 = unlimited · the admin scope only for admin users' tokens</span></div>
<form method="get" action="/admin/tokens" class="inline-form search" role="search">\
<label class="offscreen" for="token-q">Search tokens</label><input type="search" id="token-q" name="q" value="${q}" \
placeholder="user name or label"><button class="btn btn-sm" type="submit">Search</button>${
    q === '' ? '' : html`<a class="btn btn-sm btn-ghost" href="/admin/tokens">Clear</a>`
  }</form>
${
  tokens.length === 0
    ? html`<p class="empty">${q === '' ? 'No tokens exist yet.' : 'No token matches.'}</p>`
    : html`<div class="table-wrap"><table class="stack"><thead><tr><th>Token</th><th>User</th><th>Used</th>\
<th>Scopes, rate and limits</th></tr></thead><tbody>${tokens.map((t) => tokenRow(ctx, t))}</tbody></table></div>`
}
${
  pages === 1
    ? ''
    : html`<nav class="pager" aria-label="Pages">
${pageNo === 1 ? html`<span></span>` : html`<a class="btn btn-sm" href="${listLink(q, pageNo - 1)}">← Newer</a>`}
<span class="muted small">Page ${pageNo} of ${pages}</span>
${
  pageNo === pages
    ? html`<span></span>`
    : html`<a class="btn btn-sm" href="${listLink(q, pageNo + 1)}" rel="next">Older →</a>`
}
</nav>`
}
</section>`;
  return reply(page(ctx, 'API Tokens · Admin', body), status);
}

/** GET /admin/tokens */
export async function adminTokens(ctx: WebContext): Promise<Reply> {
  await ctx.deps.accounts.fresh();
  // Only a real token id is echoed back, so the message cannot be made to say anything else.
  const saved = ctx.deps.accounts.token(field(ctx.query, 'saved'));
  const revoking = ctx.deps.accounts.token(field(ctx.query, 'revoke'));
  if (revoking !== undefined) return tokensPage(ctx, { revoking });
  if (field(ctx.query, 'revoked') === '1')
    return tokensPage(ctx, { message: 'The token was revoked. It stops working at once.' });
  return tokensPage(ctx, saved === undefined ? {} : { message: `Token ${saved.id} was updated.` });
}

/** POST /admin/tokens: sets one token's scopes and rate limit. */
export async function adminTokenUpdate(ctx: WebContext): Promise<Reply> {
  const { accounts } = ctx.deps;
  await accounts.fresh();
  const id = field(ctx.form, 'id');
  const t = accounts.token(id);
  if (t === undefined) throw new HttpError('not_found', 'There is no such token.');
  if (field(ctx.form, 'action') === 'revoke') {
    await accounts.revokeToken(id, undefined, actorOf(ctx));
    return redirect('/admin/tokens?revoked=1', 303);
  }
  const owner = accounts.user(t.user_id);
  const problems = tokenFormProblems(ctx.form, owner === undefined ? [] : allowedScopes(owner), false);
  const limits = limitsFrom(ctx);
  if (typeof limits === 'string') problems.push(limits);
  if (problems.length > 0 || typeof limits === 'string') return tokensPage(ctx, { problems }, 400);
  try {
    await accounts.updateToken(id, scopesFrom(ctx.form), rateFrom(ctx.form), limits, actorOf(ctx));
  } catch (err) {
    // The token or its owner changed between the check above and the locked write.
    if (!(err instanceof AccountError)) throw err;
    return tokensPage(ctx, { problems: [err.message] }, statusOf(err));
  }
  return redirect(`/admin/tokens?saved=${encodeURIComponent(id)}#token-${encodeURIComponent(id)}`, 303);
}
