import { html as reply, type Reply } from '../../http/reply.ts';
import { contentOf, HASH_RE } from '../../paste/paste.ts';
import { PasteError } from '../../paste/errors.ts';
import { field, type WebContext } from '../context.ts';
import { notice } from '../forms.ts';
import { html, isolate, type SafeHtml } from '../html.ts';
import { page } from '../layout.ts';
import { lineDiff } from '../line-diff.ts';
import { pasteTitle } from '../paste-view.ts';
import { readerWithoutPassword } from './paste.ts';

/** The diff as a code block: each line escaped, marked as kept, removed or added. */
function diffBlock(before: string, after: string): SafeHtml {
  const lines = lineDiff(before, after);
  if (lines === null) return notice('info', 'These two revisions differ too much to compare here; open each with Raw.');
  if (lines.every((l) => l.op === ' ')) return notice('info', 'The text of these two revisions is the same.');
  const cls = { ' ': '', '-': 'tk-del', '+': 'tk-add' } as const;
  return html`<pre class="code diff" tabindex="0"><code>${lines.map(
    (l) =>
      html`<span class="l">${l.op === ' ' ? html`  ${l.text}` : html`<span class="${cls[l.op]}">${l.op} ${l.text}</span>`}</span>`,
  )}</code></pre>`;
}

/**
 * GET /p/{hash}/history (README, Revisions): every version of a paste with its date, and a
 * line diff of any two (`?from=N&to=M`, the last two by default). For whoever may read the
 * paste now; a password-protected one asks for its password on its page first. The list
 * comes from what the service worked out once for this version of the paste; only the two
 * versions compared are read.
 */
export async function pasteHistory(ctx: WebContext): Promise<Reply> {
  const hash = ctx.params['hash'] ?? '';
  if (!HASH_RE.test(hash)) throw new PasteError('not_found');
  const peeked = await ctx.deps.pastes.peek(hash, ctx.viewer);
  const reader = readerWithoutPassword(ctx, peeked);
  if (reader === null) throw new PasteError('password_required');
  const opts = { client: ctx.clientKey, consume: false, proof: reader.proof };
  const { current, versions } = await ctx.deps.pastes.history(hash, ctx.viewer, opts);
  const numbers = versions.map((v) => v.revision);
  const last = numbers.at(-1) ?? 1;
  const pick = (name: string, fallback: number): number => {
    const n = Number(field(ctx.query, name));
    return numbers.includes(n) ? n : fallback;
  };
  const to = pick('to', last);
  const from = pick('from', numbers.includes(to - 1) ? to - 1 : (numbers[0] ?? 1));
  const textOf = async (n: number): Promise<string | null> => {
    try {
      return contentOf((await ctx.deps.pastes.revision(hash, n, ctx.viewer, opts)).paste);
    } catch (err) {
      if (err instanceof PasteError && err.kind === 'damaged') return null;
      throw err;
    }
  };
  let diff: SafeHtml;
  if (numbers.length === 1) diff = html`<p class="muted">This paste has not been edited.</p>`;
  else {
    const [before, after] = [await textOf(from), await textOf(to)];
    diff =
      before === null || after === null
        ? notice('error', `Revision ${before === null ? from : to} cannot be read: its file on the server is damaged.`)
        : diffBlock(before, after);
  }
  const { times } = ctx.deps;
  const now = ctx.deps.now();
  const options = (selected: number): SafeHtml =>
    html`${numbers.map((n) => html`<option value="${n}"${n === selected ? html` selected` : ''}>Revision ${n}</option>`)}`;
  const body = html`<div class="page-head"><h1>History of ${isolate(pasteTitle(current))}</h1><a class="btn" href="/p/${hash}">Back to the paste</a></div>
<section class="card"><div class="table-wrap"><table class="stack"><thead><tr><th>Revision</th><th>Saved</th><th>Size</th></tr></thead><tbody>
${[...versions].reverse().map((v) => html`<tr><td data-label="Revision">${v.revision}${v.revision === last ? html` <span class="badge badge-accent">current</span>` : ''}</td><td data-label="Saved">${v.savedAt === null ? 'damaged' : times.tag(v.savedAt, now)}</td><td data-label="Size">${v.bytes === null ? '?' : `${v.bytes} bytes`}</td></tr>`)}
</tbody></table></div></section>
<section class="card"><form method="get" action="/p/${hash}/history" class="inline-form compare">
<label for="from">Compare</label><select id="from" name="from">${options(from)}</select>
<label for="to">with</label><select id="to" name="to">${options(to)}</select>
<button class="btn btn-sm" type="submit">Show the changes</button></form>
${diff}</section>`;
  return reply(page(ctx, `History · ${pasteTitle(current)}`, body));
}
