import { html as reply, type Reply } from '../../http/reply.ts';
import { isDeleteKey } from '../../paste/anonymous.ts';
import { PasteError } from '../../paste/errors.ts';
import { HASH_RE } from '../../paste/paste.ts';
import type { WebContext } from '../context.ts';
import { csrfInput } from '../forms.ts';
import { html } from '../html.ts';
import { page } from '../layout.ts';

/** The hash and delete key of the link, 404 unless both have their shape (nothing is read for a bad one). */
function linkOf(ctx: WebContext): { hash: string; key: string } {
  const hash = ctx.params['hash'] ?? '';
  const key = ctx.params['key'] ?? '';
  if (!HASH_RE.test(hash) || !isDeleteKey(key)) throw new PasteError('not_found');
  return { hash, key };
}

/**
 * GET /p/{hash}/delete/{key}, an anonymous paste's delete link (README, Anonymous pastes):
 * it asks first, so a link preview or a prefetch deletes nothing.
 */
export function keyDeleteForm(ctx: WebContext): Reply {
  const { hash, key } = linkOf(ctx);
  const body = html`<section class="card medium warning-card">
<h1>Delete this paste?</h1>
<p class="muted">Paste <a href="/p/${hash}">${hash}</a> is removed from the server for good, together with its short \
link. This cannot be undone.</p>
<form method="post" action="/p/${hash}/delete/${key}">
${csrfInput(ctx.csrf())}
<div class="actions"><button class="btn btn-danger" type="submit">Delete for good</button><a class="btn btn-ghost" \
href="/p/${hash}">Keep it</a></div>
</form>
</section>`;
  return reply(page(ctx, 'Delete paste', body));
}

/** POST /p/{hash}/delete/{key}: deletes the paste when the key is its own; 404 otherwise, as for no paste. */
export async function keyDelete(ctx: WebContext): Promise<Reply> {
  const { hash, key } = linkOf(ctx);
  await ctx.deps.pastes.deleteWithKey(hash, key);
  const body = html`<section class="card medium">
<h1>Paste deleted</h1>
<p class="muted">Paste ${hash} and its short link are gone.</p>
<div class="actions"><a class="btn btn-primary" href="/">New paste</a></div>
</section>`;
  return reply(page(ctx, 'Paste deleted', body));
}
