import type { AppDeps } from '../deps.ts';
import { HttpError, notFound } from '../http/errors.ts';
import { html as reply, redirect, type Reply } from '../http/reply.ts';
import { HASH_RE, SHORTCODE_RE } from '../paste/ids.ts';
import { formatTime } from '../paste/paste.ts';
import { html } from './html.ts';
import { page } from './layout.ts';

export interface WebContext {
  deps: AppDeps;
  params: Record<string, string>;
}

export async function home(): Promise<Reply> {
  return reply(page('Paste', html`<h1>Paste</h1><p>A small self-hosted paste service. See the API under <code>/api/v1/</code>.</p>`));
}

/** GET /p/{hash}: the paste page. A one-time paste only shows its warning on GET. */
export async function pastePage(ctx: WebContext): Promise<Reply> {
  const hash = ctx.params['hash'] ?? '';
  if (!HASH_RE.test(hash)) throw notFound();
  const p = await ctx.deps.pastes.peek(hash, null);
  if (p.burn_after_read === 1) {
    return reply(page('Burn After Read paste', html`<h1>Burn After Read paste</h1><p>This paste can be viewed only once.</p>`));
  }
  if (ctx.deps.pastes.needsPassword(p, null)) {
    throw new HttpError('password_required', 'This paste is protected by a password');
  }
  const shown = await ctx.deps.pastes.read(hash, null, undefined);
  const title = shown.title === '' ? 'Untitled paste' : shown.title;
  return reply(
    page(
      title,
      html`<h1>${title}</h1>
<p>${shown.language} · ${formatTime(shown.created_at)} UTC · ${shown.view_count} views</p>
<pre><code>${shown.content}</code></pre>`,
    ),
  );
}

/** GET /s/{code}: the short link, a 302 to the paste page (CONTRACT §3). */
export async function shortLink(ctx: WebContext): Promise<Reply> {
  const code = ctx.params['code'] ?? '';
  if (!SHORTCODE_RE.test(code)) throw notFound();
  const p = await ctx.deps.store.getByShortcode(code);
  if (p === null || p.privacy === 'private') throw notFound();
  return redirect(`${ctx.deps.config.baseUrl}/p/${p.hash}`);
}
