import { html as reply, type Reply } from '../../http/reply.ts';
import { contentOf, HASH_RE, type Paste } from '../../paste/paste.ts';
import { PasteError } from '../../paste/errors.ts';
import { field, type WebContext } from '../context.ts';
import { notice } from '../forms.ts';
import { html, isolate, type SafeHtml } from '../html.ts';
import { page } from '../layout.ts';
import { lineDiff } from '../line-diff.ts';
import { pasteTitle } from '../paste-view.ts';
import { timeTag } from '../time.ts';
import { readerWithoutPassword } from './paste.ts';

/** The diff as a code block: each line escaped, marked as kept, removed or added. */
function diffBlock(before: Paste, after: Paste): SafeHtml {
  const lines = lineDiff(contentOf(before), contentOf(after));
  if (lines === null) return notice('info', 'These two revisions differ too much to compare here; open each with Raw.');
  if (lines.every((l) => l.op === ' ')) return notice('info', 'The text of these two revisions is the same.');
  const cls = { ' ': '', '-': 'tk-del', '+': 'tk-add' } as const;
  return html`<pre class="code diff" tabindex="0"><code>${lines.map(
    (l) => html`<span class="l">${l.op === ' ' ? html`  ${l.text}` : html`<span class="${cls[l.op]}">${l.op} ${l.text}</span>`}</span>`,
  )}</code></pre>`;
}

/**
 * GET /p/{hash}/history (README, Revisions): every version of a paste with its date, and a
 * line diff of any two (`?from=N&to=M`, the last two by default). For whoever may read the
 * paste now; a password-protected one asks for its password on its page first.
 */
export async function pasteHistory(ctx: WebContext): Promise<Reply> {
  const hash = ctx.params['hash'] ?? '';
  if (!HASH_RE.test(hash)) throw new PasteError('not_found');
  const current = await ctx.deps.pastes.peek(hash, ctx.viewer);
  const reader = readerWithoutPassword(ctx, current);
  if (reader === null) throw new PasteError('password_required');
  const versions = await ctx.deps.pastes.history(hash, ctx.viewer, { client: ctx.ip, consume: false, proof: reader.proof });
  const numbers = versions.map((v) => v.revision ?? 1);
  const pick = (name: string, fallback: number): Paste => {
    const n = Number(field(ctx.query, name));
    return versions.find((v) => (v.revision ?? 1) === n) ?? (versions.find((v) => (v.revision ?? 1) === fallback) as Paste);
  };
  const last = numbers.at(-1) ?? 1;
  const to = pick('to', last);
  const from = pick('from', Math.max(1, (to.revision ?? 1) - 1));
  const now = ctx.deps.now();
  const options = (selected: number): SafeHtml => html`${numbers.map((n) => html`<option value="${n}"${n === selected ? html` selected` : ''}>Revision ${n}</option>`)}`;
  const body = html`<div class="page-head"><h1>History of ${isolate(pasteTitle(current))}</h1><a class="btn" href="/p/${hash}">Back to the paste</a></div>
<section class="card"><div class="table-wrap"><table class="stack"><thead><tr><th>Revision</th><th>Saved</th><th>Size</th></tr></thead><tbody>
${[...versions].reverse().map((v) => html`<tr><td data-label="Revision">${v.revision ?? 1}${v === versions.at(-1) ? html` <span class="badge badge-accent">current</span>` : ''}</td><td data-label="Saved">${timeTag(v.updated_at, now)}</td><td data-label="Size">${Buffer.byteLength(contentOf(v))} bytes</td></tr>`)}
</tbody></table></div></section>
<section class="card"><form method="get" action="/p/${hash}/history" class="inline-form compare">
<label for="from">Compare</label><select id="from" name="from">${options(from.revision ?? 1)}</select>
<label for="to">with</label><select id="to" name="to">${options(to.revision ?? 1)}</select>
<button class="btn btn-sm" type="submit">Show the changes</button></form>
${numbers.length === 1 ? html`<p class="muted">This paste has not been edited.</p>` : diffBlock(from, to)}</section>`;
  return reply(page(ctx, `History · ${pasteTitle(current)}`, body));
}
