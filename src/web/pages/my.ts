import { html as reply, type Reply } from '../../http/reply.ts';
import { isLanguage } from '../../paste/language.ts';
import { isExpired, PRIVACIES, type Paste } from '../../paste/paste.ts';
import { OWNED_QUERY_UNITS, searchWords } from '../../paste/owned-search.ts';
import type { OwnedFilter, OwnedPage } from '../../paste/service.ts';
import { languageChoices } from '../languages.ts';
import { field, userOf, type WebContext } from '../context.ts';
import { notice } from '../forms.ts';
import { html, isolate, type SafeHtml } from '../html.ts';
import { page } from '../layout.ts';
import { pasteBadges, pasteTitle } from '../paste-view.ts';
import type { TimeTags } from '../time.ts';

export const MY_PAGE_SIZE = 20;

/** A burned paste's receipt (README, Burn receipts): when it was read, and how. */
function receiptLine(times: TimeTags, p: Paste, now: number): SafeHtml | '' {
  const r = p.receipt;
  if (!p.burned || r === null || r === undefined) return '';
  const how = r.via === 'web' ? 'on the web' : html`through the API with token <code>${r.token_id ?? 'unknown'}</code>`;
  return html`<div class="muted small receipt">Read ${times.tag(r.at, now)} ${how}.</div>`;
}

function row(times: TimeTags, p: Paste, now: number): SafeHtml {
  const dead = p.burned || isExpired(p, now);
  return html`<tr>
<td class="full" data-label="Paste"><a class="title-cell" href="/p/${p.hash}">${isolate(pasteTitle(p))}</a> \
${pasteBadges(p, now)}${receiptLine(times, p, now)}</td>
<td data-label="Created">${times.tag(p.created_at, now)}</td>
<td data-label="Views" class="num">${p.view_count}</td>
<td data-label="Actions"><div class="row-actions">
${dead ? '' : html`<a class="btn btn-sm" href="/p/${p.hash}/edit">Edit</a>`}
<a class="btn btn-sm btn-ghost" href="/p/${p.hash}/delete">Delete</a>
</div></td>
</tr>`;
}

/** The search of My pastes from the query: words (bounded by searchWords), a language, a privacy. */
function filterOf(ctx: WebContext): OwnedFilter {
  const f: OwnedFilter = {};
  const q = searchWords(field(ctx.query, 'q'));
  if (q !== undefined) f.text = q;
  const language = field(ctx.query, 'language');
  if (isLanguage(language)) f.language = language;
  const privacy = field(ctx.query, 'privacy');
  if ((PRIVACIES as readonly string[]).includes(privacy)) f.privacy = privacy;
  return f;
}

function searchForm(f: OwnedFilter): SafeHtml {
  const opt = (value: string, label: string, selected: string | undefined): SafeHtml =>
    html`<option value="${value}"${value === (selected ?? '') ? html` selected` : ''}>${label}</option>`;
  return html`<form method="get" action="/my" class="inline-form search" role="search">
<label class="offscreen" for="q">Search</label><input type="search" id="q" name="q" value="${f.text ?? ''}" \
placeholder="Search titles and text" maxlength="${OWNED_QUERY_UNITS}">
<label class="offscreen" for="language">Language</label><select id="language" \
name="language">${opt('', 'Any language', f.language)}${languageChoices()
    .slice(1)
    .map(([l, label]) => opt(l, label, f.language))}</select>
<label class="offscreen" for="privacy">Visibility</label><select id="privacy" \
name="privacy">${opt('', 'Any visibility', f.privacy)}${PRIVACIES.map((p) => opt(p, p, f.privacy))}</select>
<button class="btn btn-sm" type="submit">Search</button></form>`;
}

/** What a search that ran out of time says (paste/service.ts, OWNED_SEARCH_MS). */
function stoppedNote(searched: OwnedPage['searched']): SafeHtml | '' {
  if (searched === undefined) return '';
  return notice(
    'info',
    `The search stopped after your newest ${searched.read} of ${searched.of} pastes, to answer in time. Narrow ` +
      'it (a language, a visibility or more words) to search further.',
  );
}

/** GET /my?page=N[&q=&language=&privacy=]: the user's own pastes, newest first, in every state; searched when asked. */
export async function myPastes(ctx: WebContext): Promise<Reply> {
  const user = userOf(ctx);
  const requested = Number(field(ctx.query, 'page') || '1');
  const pageNo = Number.isSafeInteger(requested) && requested >= 1 ? requested : 1;
  const filter = filterOf(ctx);
  const {
    pastes,
    total,
    searched,
    more: counted,
  } = await ctx.deps.pastes.listOwned(user.id, (pageNo - 1) * MY_PAGE_SIZE, MY_PAGE_SIZE, filter);
  const searching = Object.keys(filter).length > 0;
  const more = (n: number): string =>
    `/my?${new URLSearchParams({
      ...(filter.text === undefined ? {} : { q: filter.text }),
      ...(filter.language === undefined ? {} : { language: filter.language }),
      ...(filter.privacy === undefined ? {} : { privacy: filter.privacy }),
      page: String(n),
    }).toString()}`;
  const known = Math.max(1, Math.ceil(total / MY_PAGE_SIZE));
  // A search that stopped early, or stopped counting, has more matches past the last page it can number.
  const open = counted === true || (searched !== undefined && pastes.length === MY_PAGE_SIZE);
  const pages = open ? Math.max(known, pageNo + 1) : known;
  const now = ctx.deps.now();
  const deleted = field(ctx.query, 'deleted') === '1' ? notice('ok', 'The paste was deleted.') : '';
  const table =
    pastes.length === 0
      ? html`<p class="empty">${
          searching
            ? 'No paste of yours matches.'
            : total === 0
              ? html`You have no pastes yet. <a href="/">Create one</a>.`
              : 'Nothing on this page.'
        }</p>`
      : html`<div class="table-wrap"><table class="stack"><thead><tr><th>Paste</th><th>Created</th><th>Views</th><th>\
<span class="offscreen">Actions</span></th></tr></thead>
<tbody>${pastes.map((p) => row(ctx.deps.times, p, now))}</tbody></table></div>`;
  const pager =
    pages > 1
      ? html`<nav class="pager" aria-label="Pages">
${pageNo > 1 ? html`<a class="btn btn-sm" href="${more(pageNo - 1)}" rel="prev">← Newer</a>` : html`<span></span>`}
<span class="muted small">Page ${pageNo}${
          searched === undefined && counted === undefined ? html` of ${pages}` : ''
        }</span>
${pageNo < pages ? html`<a class="btn btn-sm" href="${more(pageNo + 1)}" rel="next">Older →</a>` : html`<span></span>`}
</nav>`
      : '';
  const body = html`${deleted}<div class="page-head"><h1>My pastes</h1>\
<a class="btn btn-primary" href="/">New paste</a></div>
<section class="card">${searchForm(filter)}<p class="muted small">${counted === true ? 'More than ' : ''}${total} \
${
  total === 1 ? 'paste' : 'pastes'
}${searching ? ' found' : ' in all'}.</p>${stoppedNote(searched)}${table}${pager}</section>`;
  return reply(page(ctx, 'My pastes', body));
}
