import { html as reply, redirect, type Reply } from '../../http/reply.ts';
import { needsPassword } from '../../paste/access.ts';
import { PasteError } from '../../paste/errors.ts';
import { contentOf, HASH_RE, type Paste } from '../../paste/paste.ts';
import {
  ANONYMOUS_NAME,
  ANONYMOUS_OWNER,
  ANONYMOUS_PRIVACIES,
  isAnonymous,
  type AnonymousDoor,
} from '../../paste/anonymous.ts';
import { EXPIRY_MS } from '../../paste/expiry.ts';
import { validateCreate, type CreateInput, type Validated } from '../../paste/validate.ts';
import { HttpError } from '../../http/errors.ts';
import type { Fields } from '../../http/fields.ts';
import { field, takesFiles, userOf, type WebContext } from '../context.ts';
import { csrfInput, problemList } from '../forms.ts';
import { html, isolate, type SafeHtml } from '../html.ts';
import { pasteLanguageLabel } from '../languages.ts';
import { page } from '../layout.ts';
import {
  EXPIRY_CHOICES,
  PRIVACY_CHOICES,
  flagBox,
  formToFields,
  pasteFields,
  problemMessages,
  typedText,
  filesField,
  withFormFiles,
  type PasteFormValues,
} from '../paste-form.ts';
import type { NewFile } from '../../paste/files.ts';
import { encryptOption } from '../encrypted-view.ts';
import { pasteTitle } from '../paste-view.ts';

const RECENT_COUNT = 20;

const ANONYMOUS_PRIVACY_CHOICES = PRIVACY_CHOICES.filter(([v]) => ANONYMOUS_PRIVACIES.includes(v));

/** The expiries a visitor may pick: none longer than ANONYMOUS_MAX_EXPIRY, never `never`. */
const anonymousExpiries = (door: AnonymousDoor): (readonly [string, string])[] => {
  const cap = EXPIRY_MS[door.rules.maxExpiry];
  return EXPIRY_CHOICES.filter(([e]) => {
    const ms = EXPIRY_MS[e];
    return ms !== null && ms <= cap;
  });
};

interface CreateState extends PasteFormValues {
  highlight: boolean;
  burn: boolean;
}

const EMPTY: CreateState = {
  title: '',
  content: '',
  language: 'auto',
  privacy: 'public',
  expiry: 'never',
  highlight: true,
  burn: false,
};

function createForm(ctx: WebContext, v: CreateState, problems: string[]): SafeHtml {
  const door = ctx.user === null ? ctx.deps.anonymous : null;
  const files = takesFiles(ctx);
  const password = html`<div class="field"><label for="password">Password</label><input type="password" id="password" \
name="password" autocomplete="new-password" placeholder="Optional"></div>`;
  const later =
    door === null
      ? html`You can edit or delete it later under <a href="/my">My pastes</a>.`
      : html`Without an account: you get a link to delete it, shown once. <a href="/login">Log in</a> for more.`;
  return html`<section class="card">
<div class="card-head"><h1>New paste</h1></div>
${problemList(problems)}
<form method="post" action="/"${files ? html` enctype="multipart/form-data"` : ''}>
${csrfInput(ctx.csrf())}
${
  door === null
    ? pasteFields(v, EXPIRY_CHOICES, password, PRIVACY_CHOICES, !files)
    : pasteFields(v, anonymousExpiries(door), password, ANONYMOUS_PRIVACY_CHOICES, !files)
}
${files ? filesField(ctx.deps.files.limits) : ''}
<div class="checks">
${flagBox('highlight', 'Syntax highlighting', v.highlight)}
${flagBox('burn_after_read', 'Burn after read (one view only)', v.burn)}
</div>
${encryptOption()}
<div class="actions"><button class="btn btn-primary" type="submit">Create \
paste</button><span class="muted small">${later}</span></div>
</form>
</section>`;
}

const authorOf = (ctx: WebContext, p: Paste): string =>
  isAnonymous(p) ? ANONYMOUS_NAME : (ctx.deps.accounts.user(p.owner_id)?.name ?? 'unknown');

function recentList(ctx: WebContext, recent: Paste[], pageNo: number, more: boolean): SafeHtml {
  const { times } = ctx.deps;
  const now = ctx.deps.now();
  const items = recent.map((p) => {
    const by = html`<span class="muted small">by ${isolate(authorOf(ctx, p))}</span>`;
    const language = html`<span class="badge badge-accent">${pasteLanguageLabel(p)}</span>`;
    const meta = html`${language}${by}${times.tag(p.created_at, now)}`;
    return html`<li><a class="item" href="/p/${p.hash}"><span class="item-title">${isolate(pasteTitle(p))}</span><span
class="item-meta">${meta}</span></a></li>`;
  });
  const pager =
    pageNo > 1 || more
      ? html`<nav class="pager" aria-label="Recent pastes">${
          pageNo > 1
            ? html`<a class="btn btn-sm" href="/?page=${pageNo - 1}" rel="prev">← Newer</a>`
            : html`<span></span>`
        }<span class="muted small">Page ${pageNo}</span>${
          more ? html`<a class="btn btn-sm" href="/?page=${pageNo + 1}" rel="next">Older →</a>` : html`<span></span>`
        }</nav>`
      : '';
  return html`<section class="card">
<div class="card-head"><h2>Recent pastes</h2></div>
${
  recent.length === 0
    ? html`<p class="empty">${pageNo > 1 ? 'Nothing on this page.' : 'No public pastes yet.'}</p>`
    : html`<ul class="paste-list">${items}</ul>`
}${pager}
</section>`;
}

const hero = (ctx: WebContext): SafeHtml => html`<section class="card hero">
<h1>Share text and code, simply</h1>
<p class="muted">Create pastes with syntax highlighting, short links with QR codes, passwords, expiry and one-time \
views, from the web or through the API.</p>
<div class="actions"><a class="btn btn-primary" href="/login">Log in to create a paste</a>${
  ctx.registrationOpen() ? html`<a class="btn" href="/register">Register</a>` : ''
}</div>
</section>`;

/** The page number asked for (`?page=N`), 1 when it is missing or out of range. */
function pageNumber(ctx: WebContext): number {
  const requested = Number(field(ctx.query, 'page') || '1');
  return Number.isSafeInteger(requested) && requested >= 1 && requested <= 1_000 ? requested : 1;
}

/** One more than a page of recent pastes, to know whether there is a next page. */
const recentOf = (ctx: WebContext, pageNo: number): Promise<Paste[]> =>
  ctx.deps.pastes.listRecent(RECENT_COUNT + 1, (pageNo - 1) * RECENT_COUNT);

const recentSection = (ctx: WebContext, found: Paste[], pageNo: number): SafeHtml =>
  recentList(ctx, found.slice(0, RECENT_COUNT), pageNo, found.length > RECENT_COUNT);

/** The home page of a logged-in user: the create form beside the recent pastes. */
async function homePage(ctx: WebContext, v: CreateState, problems: string[]): Promise<string> {
  const pageNo = pageNumber(ctx);
  const recent = recentSection(ctx, await recentOf(ctx, pageNo), pageNo);
  return page(ctx, 'New paste · Paste', html`<div class="columns">${createForm(ctx, v, problems)}${recent}</div>`);
}

/**
 * The home page of a visitor who is not logged in: the same for every such visitor, so it
 * is written once and sent as it is until its pastes, their authors' names or the minute
 * of its relative times change (page-parts.ts).
 */
async function anonymousHome(ctx: WebContext): Promise<Reply> {
  const pageNo = pageNumber(ctx);
  const found = await recentOf(ctx, pageNo);
  const names = found.map((p) => authorOf(ctx, p));
  const minute = Math.floor(ctx.deps.now() / 60_000);
  const render = (): string => page(ctx, 'Paste', html`${hero(ctx)}${recentSection(ctx, found, pageNo)}`);
  // Until the first account exists the page offers to register, which that account ends: not kept until then.
  const body =
    ctx.deps.accounts.users.length === 0
      ? Buffer.from(render())
      : ctx.deps.parts.home(pageNo, found, names, minute, render);
  return { kind: 'bytes', status: 200, contentType: 'text/html; charset=utf-8', body };
}

/** GET /: the create form (when logged in, or for anyone with ANONYMOUS_PASTES) and the recent public pastes. */
export async function home(ctx: WebContext): Promise<Reply> {
  const door = ctx.deps.anonymous;
  if (ctx.user === null && door === null) return anonymousHome(ctx);
  const start = ctx.user === null && door !== null ? { ...EMPTY, expiry: door.rules.maxExpiry } : EMPTY;
  return reply(await homePage(ctx, await startingFrom(ctx, start), []));
}

/**
 * `/?from=<hash>` ("New from this", README, Web pages): the create form filled with a paste
 * the visitor may read without a password, never a one-time one; otherwise an empty form.
 */
async function startingFrom(ctx: WebContext, empty: CreateState): Promise<CreateState> {
  const hash = field(ctx.query, 'from');
  if (ctx.user === null || !HASH_RE.test(hash)) return empty;
  try {
    const p = await ctx.deps.pastes.peek(hash, ctx.viewer);
    if (p.burn_after_read === 1 || p.encrypted === 1 || needsPassword(p, ctx.viewer)) return EMPTY;
    return { ...EMPTY, title: p.title, content: contentOf(p), language: p.language };
  } catch (err) {
    if (err instanceof PasteError) return EMPTY;
    throw err;
  }
}

/** POST /: creates a paste with the API's rules, then shows it (a visitor's: its delete link first). */
export async function createPaste(ctx: WebContext): Promise<Reply> {
  const door = ctx.user === null ? ctx.deps.anonymous : null;
  // A form whose files were refused while it was read changes nothing: it is shown again (web/side.ts).
  if (ctx.uploadRefused !== null) return reply(await homePage(ctx, EMPTY, [`${ctx.uploadRefused}.`]), 413);
  if (door !== null) await spend(ctx, door);
  const fields = formToFields(
    ctx.form,
    ['highlight', 'burn_after_read', 'encrypted'],
    ['title', 'content', 'language', 'privacy', 'expiry', 'password'],
  );
  typedText(fields);
  const checked = validateCreate(fields, ctx.deps.config.maxPasteBytes, ctx.uploads.length > 0);
  const v: typeof checked = door === null || !checked.ok ? checked : anonymousInput(door, fields, checked.value);
  const state = (): CreateState => ({
    title: String(fields['title'] ?? ''),
    // An envelope shown again would be encrypted again: the browser's text is not the server's to show.
    content: fields['encrypted'] === '1' ? '' : String(fields['content'] ?? ''),
    language: String(fields['language'] ?? 'auto'),
    privacy: String(fields['privacy'] ?? 'public'),
    expiry: String(fields['expiry'] ?? 'never'),
    highlight: fields['highlight'] === '1',
    burn: fields['burn_after_read'] === '1',
  });
  if (!v.ok) {
    const status = v.problems.some((p) => p.tooLarge) ? 413 : 400;
    return reply(await homePage(ctx, state(), problemMessages(v.problems)), status);
  }
  const made = await withFormFiles(ctx.uploads, (files) =>
    door !== null
      ? createdAnonymous(ctx, door, v.value, files)
      : ctx.deps.pastes
          .create(v.value, userOf(ctx).id, undefined, undefined, files)
          .then((paste) => redirect(`/p/${paste.hash}`, 303)),
  );
  return made.ok ? made.value : reply(await homePage(ctx, state(), [made.problem]), made.status);
}

/** A visitor's create spends their budget (README, Anonymous pastes): 429 once it is spent. */
async function spend(ctx: WebContext, door: AnonymousDoor): Promise<void> {
  const d = await door.admit(ctx.clientKey);
  if (!d.allowed)
    throw new HttpError('rate_limited', 'Too many pastes from this address; try again in a minute.', {
      headers: { 'retry-after': String(d.retryAfterSec) },
    });
}

/** A visitor's input within the door's limits, the longest expiry when none was picked. */
function anonymousInput(door: AnonymousDoor, fields: Fields, asked: CreateInput): Validated<CreateInput> {
  const value = { ...asked, expiry: door.expiryOf(fields, asked.expiry) };
  const problems = door.problems(fields, value);
  return problems.length === 0 ? { ok: true, value } : { ok: false, problems };
}

/** The paste made, and its delete link: shown this once, kept on the server only as a digest. */
async function createdAnonymous(
  ctx: WebContext,
  door: AnonymousDoor,
  input: CreateInput,
  files: readonly NewFile[],
): Promise<Reply> {
  const { key, digest } = door.newDeleteKey();
  const p = await ctx.deps.pastes.create(input, ANONYMOUS_OWNER, undefined, digest, files);
  const base = ctx.deps.config.baseUrl;
  const body = html`<section class="card medium">
<h1>Paste created</h1>
<p>Its address: <a href="/p/${p.hash}">${base}/p/${p.hash}</a></p>
<p>To delete it later, keep this link. It is shown only now, and whoever has it can delete the paste:</p>
<p><code class="delete-link">${base}/p/${p.hash}/delete/${key}</code></p>
<div class="actions"><a class="btn btn-primary" href="/p/${p.hash}">Open the paste</a></div>
</section>`;
  return reply(page(ctx, 'Paste created', body));
}
