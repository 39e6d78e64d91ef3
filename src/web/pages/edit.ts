import type { Viewer } from '../../paste/access.ts';
import { html as reply, redirect, type Reply } from '../../http/reply.ts';
import { PasteError } from '../../paste/errors.ts';
import { contentOf, HASH_RE, type Paste } from '../../paste/paste.ts';
import { validateEdit } from '../../paste/validate.ts';
import { actorOf, field, type WebContext } from '../context.ts';
import { csrfInput, notice, problemList } from '../forms.ts';
import { html, isolate } from '../html.ts';
import { page } from '../layout.ts';
import { multipartBoundary } from '../../http/multipart.ts';
import { filesOf } from '../../paste/files.ts';
import {
  currentFiles,
  EXPIRY_CHOICES,
  filesField,
  flagBox,
  PRIVACY_CHOICES,
  withFormFiles,
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
  removing: readonly string[] = [],
): Reply {
  const now = ctx.deps.now();
  const keep = p.expire_at === null ? 'Keep: never expires' : `Keep: expires ${relative(p.expire_at, now)}`;
  const sealed =
    p.encrypted === 1
      ? notice(
          'info',
          'This paste is encrypted: its content here is the envelope the server cannot read. Change its title and ' +
            'settings here, and add files when you came from its page with the key in the link; to change its text, ' +
            'send a new envelope through the API.',
        )
      : '';
  const passwordField = html`<div class="field"><label for="password">New password</label><input type="password" \
id="password" name="password" autocomplete="new-password" \
placeholder="${p.password === null ? 'Optional' : 'Empty: keep the current one'}"></div>`;
  const clearBox =
    p.password === null
      ? ''
      : html`<div class="checks">${flagBox('clear_password', 'Remove the password', clearPw)}</div>`;
  const body = html`<div class="page-head"><h1>Edit paste</h1><a class="btn btn-ghost" \
href="/p/${p.hash}">Cancel</a></div>
<section class="card">
${problemList(problems)}
${sealed}
<form method="post" action="/p/${p.hash}/edit" enctype="multipart/form-data">
${csrfInput(ctx.csrf())}
${pasteFields(v, [['keep', keep], ...EXPIRY_CHOICES], passwordField, PRIVACY_CHOICES, false)}
${currentFiles(filesOf(p), removing)}
${filesField(ctx.deps.files.limits, p.encrypted === 1)}
${clearBox}
<div class="actions"><button class="btn btn-primary" type="submit">Save changes</button><a class="btn btn-ghost" \
href="/p/${p.hash}">Cancel</a></div>
</form>
</section>`;
  return reply(page(ctx, `Edit: ${pasteTitle(p)}`, body), status);
}

/** GET /p/{hash}/edit */
export async function editForm(ctx: WebContext): Promise<Reply> {
  const p = await ownPaste(ctx, true);
  return editPage(ctx, p, valuesOf(p), false, [], 200);
}

/** POST /p/{hash}/edit: the API's edit rules; every field of the form is sent, so all are set. */
export async function editPaste(ctx: WebContext): Promise<Reply> {
  const p = await ownPaste(ctx, true);
  // A form whose files were refused while it was read changes nothing: it is shown again (web/side.ts).
  if (ctx.uploadRefused !== null) return editPage(ctx, p, valuesOf(p), false, [`${ctx.uploadRefused}.`], 413);
  const fields = formToFields(ctx.form, ['clear_password'], ['title', 'content', 'language', 'privacy', 'expiry']);
  typedText(fields);
  const password = field(ctx.form, 'password');
  if (password !== '') fields['password'] = password;
  // A multipart form may leave the text empty when the paste keeps files (the service says when it would not).
  const multipart = multipartBoundary(ctx.req.headers['content-type']) !== null;
  const v = validateEdit(fields, ctx.deps.config.maxPasteBytes, multipart);
  const remove = field(ctx.form, 'remove_file')
    .split('\n')
    .filter((n) => n !== '');
  const again = (problems: string[], status: number): Reply => {
    const values = {
      title: field(ctx.form, 'title'),
      content: field(ctx.form, 'content'),
      language: field(ctx.form, 'language'),
      privacy: field(ctx.form, 'privacy'),
      expiry: field(ctx.form, 'expiry'),
    };
    return editPage(ctx, p, values, fields['clear_password'] === '1', problems, status, remove);
  };
  if (!v.ok) return again(problemMessages(v.problems), v.problems.some((x) => x.tooLarge) ? 413 : 400);
  const input = v.value;
  const done = await withFormFiles(ctx.uploads, (add) =>
    ctx.deps.pastes.edit(p.hash, input, viewerOf(ctx), undefined, actorOf(ctx), { add, remove }),
  );
  return done.ok ? redirect(`/p/${p.hash}`, 303) : again([done.problem], done.status);
}

/** The form's values for a paste as it is. */
const valuesOf = (p: Paste): PasteFormValues => ({
  title: p.title,
  content: contentOf(p),
  language: p.language,
  privacy: p.privacy,
  expiry: 'keep',
});

/** GET /p/{hash}/delete: asks first, so a stray click or a prefetch deletes nothing. */
export async function deleteForm(ctx: WebContext): Promise<Reply> {
  const p = await ownPaste(ctx, false);
  const body = html`<section class="card medium warning-card">
<div class="icon danger" aria-hidden="true"><svg viewBox="0 0 24 24" width="26" height="26" fill="none" \
stroke="currentColor" stroke-width="2" stroke-linecap="round" stroke-linejoin="round"><path \
d="M4 7h16M10 11v6M14 11v6M6 7l1 13h10l1-13M9 7V4h6v3"/></svg></div>
<h1>Delete this paste?</h1>
<p class="title-text"><strong>${isolate(pasteTitle(p))}</strong></p>
<p class="muted">It is removed from the server for good, together with its short link. This cannot be undone.</p>
<form method="post" action="/p/${p.hash}/delete">
${csrfInput(ctx.csrf())}
<div class="actions"><button class="btn btn-danger" type="submit">Delete for good</button><a class="btn btn-ghost" \
href="/my">Keep it</a></div>
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
