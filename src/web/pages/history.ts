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
      html`<span class="l">${
        l.op === ' ' ? html`  ${l.text}` : html`<span class="${cls[l.op]}">${l.op} ${l.text}</span>`
      }</span>`,
  )}</code></pre>`;
}

/** Versions listed on one History page. */
export const HISTORY_PAGE_SIZE = 50;

/** What an encrypted revision's text is to this page: not text it can read. */
const SEALED: unique symbol = Symbol('encrypted');

/** The History page `page` with the comparison asked for kept. */
function pageLink(hash: string, pageNo: number, from: string, to: string): string {
  const q = new URLSearchParams();
  if (from !== '') q.set('from', from);
  if (to !== '') q.set('to', to);
  q.set('page', String(pageNo));
  return `/p/${hash}/history?${q.toString()}`;
}

/**
 * GET /p/{hash}/history (README, Revisions): the versions of a paste with their dates, 50 a
 * page (`?page=N`, newest first), and a line diff of any two (`?from=N&to=M`, the last two
 * by default). For whoever may read the paste now; a password-protected one asks for its
 * password on its page first. Only the page's kept files are looked at (their first few
 * KB), and the two versions compared read whole.
 */
export async function pasteHistory(ctx: WebContext): Promise<Reply> {
  const hash = ctx.params['hash'] ?? '';
  if (!HASH_RE.test(hash)) throw new PasteError('not_found');
  const peeked = await ctx.deps.pastes.peek(hash, ctx.viewer);
  const reader = readerWithoutPassword(ctx, peeked);
  if (reader === null) throw new PasteError('password_required');
  const opts = { client: ctx.clientKey, consume: false, proof: reader.proof };
  const asked = Number(field(ctx.query, 'page') || '1');
  let pageNo = Number.isSafeInteger(asked) && asked >= 1 ? asked : 1;
  let { current, numbers, versions } = await ctx.deps.pastes.history(hash, ctx.viewer, opts, {
    offset: (pageNo - 1) * HISTORY_PAGE_SIZE,
    limit: HISTORY_PAGE_SIZE,
  });
  const pages = Math.max(1, Math.ceil(numbers.length / HISTORY_PAGE_SIZE));
  if (pageNo > pages) {
    // A page past the end (the oldest revisions dropped meanwhile) shows the last one.
    pageNo = pages;
    ({ current, numbers, versions } = await ctx.deps.pastes.history(hash, ctx.viewer, opts, {
      offset: (pageNo - 1) * HISTORY_PAGE_SIZE,
      limit: HISTORY_PAGE_SIZE,
    }));
  }
  const last = numbers.at(-1) ?? 1;
  const pick = (name: string, fallback: number): number => {
    const n = Number(field(ctx.query, name));
    return numbers.includes(n) ? n : fallback;
  };
  const to = pick('to', last);
  const from = pick('from', numbers.includes(to - 1) ? to - 1 : (numbers[0] ?? 1));
  const textOf = async (n: number): Promise<string | typeof SEALED | null> => {
    try {
      const { paste } = await ctx.deps.pastes.revision(hash, n, ctx.viewer, opts);
      // An encrypted revision is an envelope the server cannot read, let alone compare.
      return paste.encrypted === 1 ? SEALED : contentOf(paste);
    } catch (err) {
      if (err instanceof PasteError && err.kind === 'damaged') return null;
      throw err;
    }
  };
  let diff: SafeHtml;
  if (numbers.length === 1) diff = html`<p class="muted">This paste has not been edited.</p>`;
  else {
    const before = await textOf(from);
    const after = await textOf(to);
    diff =
      before === null || after === null
        ? notice('error', `Revision ${before === null ? from : to} cannot be read: its file on the server is damaged.`)
        : before === SEALED || after === SEALED
          ? notice(
              'info',
              'This paste is encrypted: only a browser with its key can read its revisions, so they are not ' +
                'compared here.',
            )
          : diffBlock(before, after);
  }
  const { times } = ctx.deps;
  const now = ctx.deps.now();
  const options = (selected: number): SafeHtml =>
    html`${numbers.map(
      (n) => html`<option value="${n}"${n === selected ? html` selected` : ''}>Revision ${n}</option>`,
    )}`;
  const body = html`<div class="page-head"><h1>History of ${isolate(pasteTitle(current))}</h1>\
<a class="btn" href="/p/${hash}">Back to the paste</a></div>
<section class="card"><div class="table-wrap"><table class="stack"><thead><tr><th>Revision</th><th>Saved</th>\
<th>Size</th></tr></thead><tbody>
${versions.map(
  (v) =>
    html`<tr><td data-label="Revision">${v.revision}${
      v.revision === last ? html` <span class="badge badge-accent">current</span>` : ''
    }</td><td data-label="Saved">${
      v.savedAt === null ? 'damaged' : times.tag(v.savedAt, now)
    }</td><td data-label="Size">${v.bytes === null ? '?' : `${v.bytes} bytes`}</td></tr>`,
)}
</tbody></table></div>${
    pages === 1
      ? ''
      : html`<nav class="pager" aria-label="Revisions">${
          pageNo > 1
            ? html`<a class="btn btn-sm" href="${pageLink(
                hash,
                pageNo - 1,
                field(ctx.query, 'from'),
                field(ctx.query, 'to'),
              )}" rel="prev">← Newer</a>`
            : html`<span></span>`
        }<span class="muted small">Page ${pageNo} of ${pages}</span>${
          pageNo < pages
            ? html`<a class="btn btn-sm" href="${pageLink(
                hash,
                pageNo + 1,
                field(ctx.query, 'from'),
                field(ctx.query, 'to'),
              )}" rel="next">Older →</a>`
            : html`<span></span>`
        }</nav>`
  }</section>
<section class="card"><form method="get" action="/p/${hash}/history" class="inline-form compare">
<label for="from">Compare</label><select id="from" name="from">${options(from)}</select>
<label for="to">with</label><select id="to" name="to">${options(to)}</select>
${
  pageNo === 1 ? '' : html`<input type="hidden" name="page" value="${pageNo}">`
}<button class="btn btn-sm" type="submit">Show the changes</button></form>
${diff}</section>`;
  return reply(page(ctx, `History · ${pasteTitle(current)}`, body));
}
