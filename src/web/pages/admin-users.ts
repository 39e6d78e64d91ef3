import { USER_NAME_RE } from '../../auth/accounts.ts';
import { AccountError } from '../../auth/errors.ts';
import { hashPassword } from '../../crypto/passwords.ts';
import { RandomIds } from '../../crypto/random.ts';
import { HttpError } from '../../http/errors.ts';
import { html as reply, redirect, type Reply } from '../../http/reply.ts';
import { statusOf } from '../../pipeline/refusal.ts';
import type { User } from '../../auth/records.ts';
import { actorOf, field, sessionOf, userOf, type WebContext } from '../context.ts';
import { csrfInput, notice, problemList } from '../forms.ts';
import { html, isolate, type SafeHtml } from '../html.ts';
import { page } from '../layout.ts';
import { adminTabs } from './admin-tokens.ts';
import { sizeLabel } from '../size-label.ts';

const ids = new RandomIds();

/** localeCompare's order (the same default locale and options), without building a collator per comparison. */
const byName = new Intl.Collator();

/** A temporary password: 16 base62 characters, about 95 bits. */
const temporaryPassword = (): string => ids.base62(16);

interface UsersState {
  problems?: string[];
  message?: string;
  added?: { name: string; password: string; reset?: boolean };
  name?: string;
}

/** One small POST button of a user's row. */
function action(ctx: WebContext, u: User, name: string, label: string, danger = false): SafeHtml {
  return html`<form method="post" action="/admin/users" \
class="inline-form">${csrfInput(ctx.csrf())}<input type="hidden" name="action" value="${name}"><input type="hidden" \
name="name" value="${u.name}"><button class="btn btn-sm${
    danger ? ' btn-danger' : ' btn-ghost'
  }" type="submit">${label}</button></form>`;
}

/** What a row shows beside the user: their tokens and pastes, counted for all users at once. */
interface Counts {
  tokens: Map<number, number>;
  pastes: Map<number, number>;
  files: Map<number, number>;
}

function userRow(ctx: WebContext, u: User, me: User, counts: Counts): SafeHtml {
  const { times } = ctx.deps;
  const now = ctx.deps.now();
  const tokens = counts.tokens.get(u.id) ?? 0;
  const pastes = counts.pastes.get(u.id) ?? 0;
  const login = u.last_login_at ?? null;
  const disabled = u.disabled === true;
  return html`<tr id="user-${u.name}">
<td class="full" data-label="User"><span class="title-cell">${isolate(u.name)}</span>${
    u.role === 'admin' ? html` <span class="badge badge-warn">admin</span>` : ''
  }${disabled ? html` <span class="badge">disabled</span>` : ''}${
    u.password_temporary === true ? html` <span class="badge">temporary password</span>` : ''
  }${
    u.id === me.id ? html` <span class="muted small">(you)</span>` : ''
  }<br><span class="muted small">id ${u.id} · created ${times.tag(u.created_at, now)}</span></td>
<td data-label="Last login">${login === null ? html`<span class="muted">never</span>` : times.tag(login, now)}</td>
<td data-label="Tokens" class="num"><a href="/admin/tokens?q=${encodeURIComponent(u.name)}">${tokens}</a></td>
<td data-label="Pastes" class="num">${pastes}</td>
<td data-label="Files" class="num">${sizeLabel(counts.files.get(u.id) ?? 0)}</td>
<td class="full" data-label=""><span class="row-actions">${
    disabled ? action(ctx, u, 'enable', 'Enable') : action(ctx, u, 'disable', 'Disable', true)
  }${
    u.role === 'admin' ? action(ctx, u, 'unadmin', 'Remove admin') : action(ctx, u, 'admin', 'Make admin')
  }${action(ctx, u, 'reset', 'Reset password')}</span></td>
</tr>`;
}

async function usersPage(ctx: WebContext, s: UsersState, status = 200): Promise<Reply> {
  const me = userOf(ctx);
  // The files column: one query over the pastes that hold files on PostgreSQL (pg/owner-lists.ts).
  const users = [...ctx.deps.accounts.users].sort((a, b) => byName.compare(a.name, b.name));
  const tokens = new Map<number, number>();
  for (const t of ctx.deps.accounts.tokens) tokens.set(t.user_id, (tokens.get(t.user_id) ?? 0) + 1);
  const ids = users.map((u) => u.id);
  const [pastes, files] = await Promise.all([ctx.deps.pastes.countsOwned(ids), ctx.deps.pastes.filesOwned(ids)]);
  const counts = { tokens, pastes, files };
  const rows = users.map((u) => userRow(ctx, u, me, counts));
  const body = html`${adminTabs('users')}
${s.message === undefined ? '' : notice('ok', s.message)}
${
  s.added === undefined
    ? ''
    : html`<section class="card secret-card" id="added"><div class="alert alert-ok"><strong>${isolate(s.added.name)} ${
        s.added.reset === true ? 'has a new password; their sessions have ended' : 'was added'
      }.</strong> Their temporary password is shown only this once; hand it over safely. They choose their own \
at their first sign-in.</div>
<label class="label" for="temporary-password">Temporary password</label>
<div class="secret-box"><input type="text" id="temporary-password" class="copyable" value="${s.added.password}" \
readonly spellcheck="false"><button class="btn btn-primary" type="button" data-copy="temporary-password" \
hidden>Copy</button></div>
<p class="muted small">The server keeps only a hash of it. If it is lost, Reset password on their row makes \
another.</p></section>`
}
${problemList(s.problems ?? [])}
<div class="columns">
<section class="card">
<div class="card-head"><h2>Users</h2><span class="muted small">${users.length} in all · a disabled user's tokens \
answer 401 and their sessions end at once</span></div>
<div class="table-wrap"><table class="stack"><thead><tr><th>User</th><th>Last login</th><th>Tokens</th><th>Pastes</th>\
<th>Files</th><th><span class="offscreen">Actions</span></th></tr></thead><tbody>${rows}</tbody></table></div>
</section>
<section class="card">
<h2>Add a user</h2>
<form method="post" action="/admin/users">
${csrfInput(ctx.csrf())}<input type="hidden" name="action" value="add">
<div class="field"><label for="new-name">User name</label><input type="text" id="new-name" name="name" \
value="${s.name ?? ''}" maxlength="32" autocapitalize="none" spellcheck="false" required><span class="hint">Letters, \
digits, ".", "_" and "-"; up to 32.</span></div>
<label class="check" for="new-admin"><input type="checkbox" id="new-admin" name="admin" value="1"> Admin</label>
<p class="hint">A temporary password is made for them and shown once.</p>
<button class="btn btn-primary btn-block" type="submit">Add user</button>
</form>
</section>
</div>`;
  return reply(page(ctx, 'Users · Admin', body), status);
}

const DONE: Record<string, string> = {
  disable: 'is disabled: their tokens answer 401 and their sessions have ended',
  enable: 'is enabled again',
  admin: 'is now an admin',
  unadmin: 'is no longer an admin; their tokens lost the admin scope',
};

/** GET /admin/users (README, Web pages: Users) */
export async function adminUsers(ctx: WebContext): Promise<Reply> {
  await ctx.deps.accounts.fresh();
  const key = field(ctx.query, 'added');
  if (key !== '') {
    const added = await ctx.deps.shownPasswords.take(key, sessionOf(ctx), ctx.deps.now());
    return usersPage(
      ctx,
      added === undefined
        ? { message: 'The user was added; the temporary password was shown once and is not kept.' }
        : { added },
    );
  }
  // Only a real user's name and a known action are echoed back.
  const done = DONE[field(ctx.query, 'done')];
  const who = ctx.deps.accounts.userByName(field(ctx.query, 'user'));
  return usersPage(ctx, done !== undefined && who !== undefined ? { message: `${who.name} ${done}.` } : {});
}

/** To the page that shows a temporary password once (shown-once.ts), never in the address. */
async function showPassword(
  ctx: WebContext,
  shown: { name: string; password: string; reset?: boolean },
): Promise<Reply> {
  const key = await ctx.deps.shownPasswords.put(sessionOf(ctx), shown, ctx.deps.now());
  return redirect(`/admin/users?added=${key}#added`, 303);
}

/** POST /admin/users: add, reset (a temporary password), disable, enable, admin, unadmin; each one is audited. */
export async function adminUsersAction(ctx: WebContext): Promise<Reply> {
  const { accounts } = ctx.deps;
  await accounts.fresh();
  const act = field(ctx.form, 'action');
  const name = field(ctx.form, 'name').trim();
  const actor = actorOf(ctx);
  try {
    if (act === 'add') {
      if (!USER_NAME_RE.test(name))
        return await usersPage(
          ctx,
          {
            problems: [
              'The user name must be 1 to 32 letters, digits, ".", "_" or "-", starting with a letter or digit.',
            ],
            name,
          },
          400,
        );
      const password = temporaryPassword();
      const user = await accounts.addUser(
        name,
        field(ctx.form, 'admin') === '1' ? 'admin' : 'user',
        await hashPassword(password),
        actor,
        { temporary: true },
      );
      return showPassword(ctx, { name: user.name, password });
    }
    if (act === 'reset') {
      const password = temporaryPassword();
      const user = await accounts.setPassword(name, await hashPassword(password), actor, { temporary: true });
      // Whoever held the old password is signed out; an admin resetting their own keeps this session.
      await ctx.deps.sessions.endOthers(user.id, ctx.session?.id ?? '');
      return showPassword(ctx, { name: user.name, password, reset: true });
    }
    if (act === 'disable' || act === 'enable') await accounts.setDisabled(name, act === 'disable', actor);
    else if (act === 'admin' || act === 'unadmin')
      await accounts.setRole(name, act === 'admin' ? 'admin' : 'user', actor);
    else throw new HttpError('bad_request', 'Unknown action.');
  } catch (err) {
    if (!(err instanceof AccountError)) throw err;
    return usersPage(ctx, { problems: [err.message], ...(act === 'add' ? { name } : {}) }, statusOf(err));
  }
  const user = accounts.userByName(name);
  return redirect(
    `/admin/users?done=${act}&user=${encodeURIComponent(
      user?.name ?? name,
    )}#user-${encodeURIComponent(user?.name ?? name)}`,
    303,
  );
}
