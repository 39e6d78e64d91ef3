import type { Viewer } from '../../paste/access.ts';
import { html as reply, redirect, type Reply } from '../../http/reply.ts';
import { PasteError } from '../../paste/errors.ts';
import { contentOf, HASH_RE, type Paste } from '../../paste/paste.ts';
import { validateEdit } from '../../paste/validate.ts';
import { actorOf, field, type WebContext } from '../context.ts';
import { csrfInput, notice, problemList } from '../forms.ts';
import { html, isolate } from '../html.ts';
import { page } from '../layout.ts';
import {
  EXPIRY_CHOICES,
  flagBox,
  formToFields,
  pasteFields,
  problemMessages,
  typedText,
  type PasteFormValues,
} from '../paste-form.ts';
import { pasteTitle } from '../paste-view.ts';
import { relative } from '../time.ts';

function viewerOf(ctx: WebContext): Viewer {
  if (ctx.viewer === null) throw new Error('edit routes need a user');
  return ctx.viewer;
}

/** The paste at `:hash` if this user may change it: 404 when unseen, 403 when not theirs. */
async function ownPaste(ctx: WebContext, live: boolean): Promise<Paste> {
  const hash = ctx.params['hash'] ?? '';
  if (!HASH_RE.test(hash)) throw new PasteError('not_found');
  // Editing needs a live paste (410 otherwise); deleting works on burned and expired ones too.
  return ctx.deps.pastes.owned(hash, viewerOf(ctx), live);
}

function editPage(
  ctx: WebContext,
  p: Paste,
  v: PasteFormValues,
  clearPw: boolean,
  problems: string[],
  status: number,
): Reply {
  const now = ctx.deps.now();
  const keep = p.expire_at === null ? 'Keep: never expires' : `Keep: expires ${relative(p.expire_at, now)}`;
  const body = html`<div class="page-head"><h1>Edit paste</h1><a class="btn btn-ghost" href="/p/${p.hash}">Cancel</a></div>
<section class="card">
${problemList(problems)}
${p.encrypted === 1 ? notice('info', 'This paste is encrypted: its content here is the envelope the server cannot read. Change its title and settings here; to change its text, send a new envelope through the API.') : ''}
<form method="post" action="/p/${p.hash}/edit">
${csrfInput(ctx.csrf())}
${pasteFields(v, [['keep', keep], ...EXPIRY_CHOICES], html`<div class="field"><label for="password">New password</label><input type="password" id="password" name="password" autocomplete="new-password" placeholder="${p.password === null ? 'Optional' : 'Empty: keep the current one'}"></div>`)}
${p.password === null ? '' : html`<div class="checks">${flagBox('clear_password', 'Remove the password', clearPw)}</div>`}
<div class="actions"><button class="btn btn-primary" type="submit">Save changes</button><a class="btn btn-ghost" href="/p/${p.hash}">Cancel</a></div>
</form>
</section>`;
  return reply(page(ctx, `Edit: ${pasteTitle(p)}`, body), status);
}

/** GET /p/{hash}/edit */
export async function editForm(ctx: WebContext): Promise<Reply> {
  const p = await ownPaste(ctx, true);
  return editPage(
    ctx,
    p,
    { title: p.title, content: contentOf(p), language: p.language, privacy: p.privacy, expiry: 'keep' },
    false,
    [],
    200,
  );
}

/** POST /p/{hash}/edit: the API's edit rules; every field of the form is sent, so all are set. */
export async function editPaste(ctx: WebContext): Promise<Reply> {
  const p = await ownPaste(ctx, true);
  const fields = formToFields(ctx.form, ['clear_password'], ['title', 'content', 'language', 'privacy', 'expiry']);
  typedText(fields);
  const password = field(ctx.form, 'password');
  if (password !== '') fields['password'] = password;
  const v = validateEdit(fields, ctx.deps.config.maxPasteBytes);
  if (!v.ok) {
    const values = {
      title: field(ctx.form, 'title'),
      content: field(ctx.form, 'content'),
      language: field(ctx.form, 'language'),
      privacy: field(ctx.form, 'privacy'),
      expiry: field(ctx.form, 'expiry'),
    };
    const status = v.problems.some((x) => x.tooLarge) ? 413 : 400;
    return editPage(ctx, p, values, fields['clear_password'] === '1', problemMessages(v.problems), status);
  }
  await ctx.deps.pastes.edit(p.hash, v.value, viewerOf(ctx), undefined, actorOf(ctx));
  return redirect(`/p/${p.hash}`, 303);
}

/** GET /p/{hash}/delete: asks first, so a stray click or a prefetch deletes nothing. */
export async function deleteForm(ctx: WebContext): Promise<Reply> {
  const p = await ownPaste(ctx, false);
  const body = html`<section class="card medium warning-card">
<div class="icon danger" aria-hidden="true"><svg viewBox="0 0 24 24" width="26" height="26" fill="none" stroke="currentColor" stroke-width="2" stroke-linecap="round" stroke-linejoin="round"><path d="M4 7h16M10 11v6M14 11v6M6 7l1 13h10l1-13M9 7V4h6v3"/></svg></div>
<h1>Delete this paste?</h1>
<p class="title-text"><strong>${isolate(pasteTitle(p))}</strong></p>
<p class="muted">It is removed from the server for good, together with its short link. This cannot be undone.</p>
<form method="post" action="/p/${p.hash}/delete">
${csrfInput(ctx.csrf())}
<div class="actions"><button class="btn btn-danger" type="submit">Delete for good</button><a class="btn btn-ghost" href="/my">Keep it</a></div>
</form>
</section>`;
  return reply(page(ctx, 'Delete paste', body));
}

/** POST /p/{hash}/delete */
export async function deletePaste(ctx: WebContext): Promise<Reply> {
  const p = await ownPaste(ctx, false);
  await ctx.deps.pastes.delete(p.hash, viewerOf(ctx), undefined, actorOf(ctx));
  return redirect('/my?deleted=1', 303);
}
