import { allowedScopes, TOKEN_LABEL_MAX } from '../../auth/accounts.ts';
import { AccountError } from '../../auth/errors.ts';
import { HttpError } from '../../http/errors.ts';
import { statusOf } from '../../pipeline/refusal.ts';
import { html as reply, redirect, type Reply } from '../../http/reply.ts';
import type { TokenRecord, User } from '../../auth/records.ts';
import { field, sessionOf, userOf, type WebContext } from '../context.ts';
import { csrfInput, inputMaxLength, notice, problemList } from '../forms.ts';
import { html, isolate, type SafeHtml } from '../html.ts';
import { page } from '../layout.ts';
import type { TimeTags } from '../time.ts';
import { rateFrom, rateLabel, scopeBadges, scopeBoxes, scopesFrom, tokenFormProblems } from '../token-form.ts';

interface KeysState {
  problems?: string[];
  created?: { record: TokenRecord; secret: string };
  /** A token whose revoke button was pressed: the page asks first. */
  revoking?: TokenRecord;
  message?: string;
  label?: string;
}

function secretBox(ctx: WebContext, created: { record: TokenRecord; secret: string }): SafeHtml {
  const base = ctx.deps.config.baseUrl;
  const curl = [
    html`<span class="l">curl -H "Authorization: Bearer ${created.secret}" \\</span>`,
    html`<span class="l">     -d content="Hello" ${base}/api/v1/paste_create.php</span>`,
  ];
  return html`<section class="card secret-card">
<div class="alert alert-ok"><strong>Your new token is ready.</strong> Copy it now: it is shown only this once, because \
the server keeps only a hash of it.</div>
<label class="label" for="new-secret">API token${
    created.record.label === '' ? '' : html` · ${isolate(created.record.label)}`
  }</label>
<div class="secret-box"><input type="text" id="new-secret" class="copyable" value="${created.secret}" readonly \
spellcheck="false"><button class="btn btn-primary" type="button" data-copy="new-secret" hidden>Copy</button></div>
<p class="muted small"><strong>Keep it secret.</strong> Anyone who has it can use the API as you, within its scopes. \
Store it in a password manager or your app's secret settings, never in code or chat. If it leaks, revoke it below and \
create a new one.</p>
<p class="small">Try it:</p>
<pre class="code snippet"><code>${curl}</code></pre>
</section>`;
}

/** The rate field: up to the configured default for users; any rate, 0 (unlimited) too, for admins. */
function rateField(dflt: number, admin: boolean): SafeHtml {
  return html`<div class="field"><label for="rate">Rate limit (requests per minute)</label><input type="number" \
id="rate" name="rate" min="${admin ? 0 : 1}" max="${admin ? 999999999 : dflt}" step="1" value="${dflt}" \
inputmode="numeric"><span class="hint">${
    admin ? '0 means unlimited.' : `At most ${dflt}; an admin can raise it.`
  }</span></div>`;
}

/** The address a token was last used from, under its time. */
function lastIp(ctx: WebContext, id: string): SafeHtml | '' {
  const ip = ctx.deps.tokenUsage.ip(id);
  return ip === undefined ? '' : html`<br><span class="muted small">from <span class="mono">${ip}</span></span>`;
}

/** The limits an admin set on a token, if any: its largest paste and the privacies it may use. */
function limitsNote(t: TokenRecord): SafeHtml | '' {
  const parts: string[] = [];
  if (t.max_paste_bytes !== undefined && t.max_paste_bytes !== null)
    parts.push(`pastes up to ${Math.round(t.max_paste_bytes / 1024)} KiB`);
  if (t.privacies !== undefined && t.privacies !== null) parts.push(`${t.privacies.join(' or ')} only`);
  return parts.length === 0 ? '' : html`<br><span class="muted small token-limits">${parts.join(' · ')}</span>`;
}

/** When a token stops working: never, in some time, or already (then it answers 401). */
function expiryCell(times: TimeTags, at: number | null, now: number): SafeHtml {
  if (at === null) return html`<span class="muted">never</span>`;
  return at <= now ? html`<span class="badge badge-bad">expired</span> ${times.tag(at, now)}` : times.tag(at, now);
}

/** The lifetimes the create form offers, in days (0: never). */
export const TOKEN_LIFETIMES: readonly [string, string][] = [
  ['0', 'Never'],
  ['7', '7 days'],
  ['30', '30 days'],
  ['90', '90 days'],
  ['365', '1 year'],
];

/** Asks before revoking: a revoked token stops working at once, and cannot be brought back. */
function revokeBox(ctx: WebContext, t: TokenRecord): SafeHtml {
  return html`<section class="card" id="revoke"><div class="alert alert-warn"><strong>Revoke ${
    t.label === '' ? 'this unlabelled token' : html`“${isolate(t.label)}”`
  }?</strong> Every script using it stops working at once, and it cannot be brought back.</div>
<form method="post" action="/api_keys.php" class="row-actions">${csrfInput(ctx.csrf())}<input type="hidden" \
name="action" value="revoke"><input type="hidden" name="id" value="${t.id}"><button class="btn btn-danger" \
type="submit">Revoke it</button><a class="btn" href="/api_keys.php">Keep it</a></form></section>`;
}

function tokenRows(ctx: WebContext, tokens: TokenRecord[]): SafeHtml {
  const { times } = ctx.deps;
  const now = ctx.deps.now();
  if (tokens.length === 0) return html`<p class="empty">You have no API tokens yet.</p>`;
  const rows = tokens.map((t) => {
    const used = ctx.deps.tokenUsage.get(t.id);
    return html`<tr>
<td class="full" data-label="Token"><span class="title-cell">${
      t.label === '' ? 'Unlabelled token' : isolate(t.label)
    }</span><br><span class="mono muted">pst_${t.id}_…</span></td>
<td data-label="Scopes">${scopeBadges(t.scopes)}</td>
<td data-label="Rate limit">${rateLabel(t.rate_limit_per_minute)}${limitsNote(t)}</td>
<td data-label="Created">${times.tag(t.created_at, now)}</td>
<td data-label="Last used">${
      used === undefined ? html`<span class="muted">never</span>` : times.tag(used, now)
    }${lastIp(ctx, t.id)}</td>
<td data-label="Expires">${expiryCell(times, t.expires_at ?? null, now)}</td>
<td data-label=""><a class="btn btn-sm btn-ghost" href="/api_keys.php?revoke=${t.id}#revoke">Revoke</a></td>
</tr>`;
  });
  return html`<div class="table-wrap"><table class="stack"><thead><tr><th>Token</th><th>Scopes</th><th>Rate limit</th>\
<th>Created</th><th>Last used</th><th>Expires</th><th><span class="offscreen">Revoke</span></th></tr></thead>\
<tbody>${rows}</tbody></table></div>`;
}

function keysPage(ctx: WebContext, user: User, s: KeysState, status = 200): Reply {
  const tokens = ctx.deps.accounts.tokens
    .filter((t) => t.user_id === user.id)
    .sort((a, b) => b.created_at - a.created_at);
  const allowed = allowedScopes(user);
  const body = html`<div class="page-head"><h1>My API Keys</h1></div>
<p class="lede">Tokens let scripts and apps use the paste API as you. Send one as \
<code>Authorization: Bearer &lt;token&gt;</code>.</p>
${s.message === undefined ? '' : notice('ok', s.message)}
${s.created === undefined ? '' : secretBox(ctx, s.created)}
${s.revoking === undefined ? '' : revokeBox(ctx, s.revoking)}
<div class="columns">
<section class="card">
<div class="card-head"><h2>Your tokens</h2><span class="muted small">${tokens.length} active</span></div>
${tokenRows(ctx, tokens)}
</section>
<section class="card">
<h2>Create a token</h2>
${problemList(s.problems ?? [])}
<form method="post" action="/api_keys.php">
${csrfInput(ctx.csrf())}<input type="hidden" name="action" value="create">
<div class="field"><label for="label">Label</label><input type="text" id="label" name="label" \
maxlength="${inputMaxLength(TOKEN_LABEL_MAX)}" value="${s.label ?? ''}" placeholder="e.g. laptop script"></div>
<div class="field"><span class="label">Scopes</span><div class="checks">${scopeBoxes(
    allowed,
    ['read', 'write'],
    'new-scope',
  )}</div>
<span class="hint">read: view pastes · write: create, edit, delete${
    allowed.includes('admin') ? ' · admin: full access to every paste' : ''
  }</span></div>
<div class="field"><label for="expires">Expires</label><select id="expires" name="expires">${TOKEN_LIFETIMES.map(
    ([v, l]) => html`<option value="${v}"${v === '90' ? html` selected` : ''}>${l}</option>`,
  )}</select><span class="hint">After this, the token answers 401 and a new one is needed.</span></div>
${rateField(ctx.deps.config.defaultTokenRatePerMinute, user.role === 'admin')}
<button class="btn btn-primary btn-block" type="submit">Create token</button>
</form>
</section>
</div>`;
  return reply(page(ctx, 'My API Keys', body), status);
}

/** GET /api_keys.php ("My API Keys", README, Web pages) */
export async function apiKeys(ctx: WebContext): Promise<Reply> {
  await ctx.deps.accounts.fresh();
  const user = userOf(ctx);
  const key = field(ctx.query, 'created');
  if (key !== '') {
    // The page after a create: its secret, once. Reloaded, it says only that it was shown.
    const created = await ctx.deps.shownOnce.take(key, sessionOf(ctx), ctx.deps.now());
    return keysPage(
      ctx,
      user,
      created === undefined
        ? { message: 'The new token was created; its secret was shown once and is not kept.' }
        : { created },
    );
  }
  const revoking = ctx.deps.accounts.tokens.find((t) => t.id === field(ctx.query, 'revoke') && t.user_id === user.id);
  if (revoking !== undefined) return keysPage(ctx, user, { revoking });
  const message = field(ctx.query, 'revoked') === '1' ? 'The token was revoked. It stops working at once.' : undefined;
  return keysPage(ctx, user, message === undefined ? {} : { message });
}

/** POST /api_keys.php: `action=create` (shows the secret once) or `action=revoke`. */
export async function apiKeysAction(ctx: WebContext): Promise<Reply> {
  const user = userOf(ctx);
  const { deps } = ctx;
  const action = field(ctx.form, 'action');
  if (action === 'revoke') {
    await deps.accounts.revokeToken(field(ctx.form, 'id'), user.id);
    return redirect('/api_keys.php?revoked=1', 303);
  }
  if (action !== 'create') throw new HttpError('bad_request', 'Unknown action.');
  const label = field(ctx.form, 'label').trim();
  const problems = tokenFormProblems(ctx.form, allowedScopes(user), true);
  const dflt = deps.config.defaultTokenRatePerMinute;
  const rate = rateFrom(ctx.form);
  // The admins' per-token limits mean nothing if users may lift them (README, Configuration).
  if (user.role !== 'admin' && (rate === 0 || rate > dflt))
    problems.push(`The rate limit must be from 1 to ${dflt} requests a minute; an admin can raise it.`);
  const days = field(ctx.form, 'expires') || '0';
  if (!TOKEN_LIFETIMES.some(([v]) => v === days)) problems.push('Choose when the token expires from the list.');
  if (problems.length > 0) return keysPage(ctx, user, { problems, label }, 400);
  try {
    const expiresAt = days === '0' ? null : deps.now() + Number(days) * 86_400_000;
    const created = await deps.accounts.createToken(user.id, { label, scopes: scopesFrom(ctx.form), rate, expiresAt });
    // POST, redirect, GET: reloading the page that shows the secret must not make another token.
    return redirect(`/api_keys.php?created=${await deps.shownOnce.put(sessionOf(ctx), created, deps.now())}`, 303);
  } catch (err) {
    if (!(err instanceof AccountError)) throw err;
    return keysPage(ctx, user, { problems: [err.message], label }, statusOf(err));
  }
}
