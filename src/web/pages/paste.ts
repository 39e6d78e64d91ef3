import { fileReply, grantedFileReply } from '../../pipeline/file-reply.ts';
import { createHash } from 'node:crypto';
import { namesEtag } from '../../http/conditional.ts';
import { html as reply, redirect, text, type Reply } from '../../http/reply.ts';
import { utf8Bytes } from '../../http/text-bytes.ts';
import { needsPassword } from '../../paste/access.ts';
import { PasteError } from '../../paste/errors.ts';
import { contentOf, HASH_RE, SHORTCODE_RE, type Paste } from '../../paste/paste.ts';
import type { Counted, HeadCounted, PasswordProof } from '../../paste/service.ts';
import { field, type WebContext } from '../context.ts';
import { csrfInput, notice, problemList } from '../forms.ts';
import { html, raw, type SafeHtml } from '../html.ts';
import { page } from '../layout.ts';
import { allowBlobImages, keepKey } from '../encrypted-view.ts';
import { allowRemoteImages, showsRendered } from '../markdown-view.ts';
import { pasteCodeApart, pasteSize, pasteView, shareCard, shortUrl } from '../paste-view.ts';
import { PAGE_HEAD_CHARS, type CodeView } from '../code-view.ts';
import { fileViews } from '../file-view.ts';
import type { TextSize } from '../../paste/literal.ts';
import { hasUnlockGrant, unlockCookie, unlockCookieName } from '../unlock-grant.ts';

/** The title the burn warning must carry (README, Web pages). */
export const BURN_TITLE = 'Burn After Read paste';

const FIRE = html`<div class="icon danger" aria-hidden="true">\
<svg viewBox="0 0 24 24" width="28" height="28" fill="none" stroke="currentColor" stroke-width="2" \
stroke-linecap="round" stroke-linejoin="round">\
<path d="M12 2c1 3.5 5 6 5 11a5 5 0 0 1-10 0c0-2.2 1-3.8 2.3-5.1C9.8 9.6 11 11 11 11s-.5-5 1-9z"/></svg></div>`;
const LOCK = html`<div class="icon" aria-hidden="true"><svg viewBox="0 0 24 24" width="26" height="26" fill="none" \
stroke="currentColor" stroke-width="2" stroke-linecap="round" stroke-linejoin="round"><rect x="4" y="11" width="16" \
height="10" rx="2"/><path d="M8 11V7a4 4 0 0 1 8 0v4"/></svg></div>`;

export function visiblePaste(ctx: WebContext): Paste | Promise<Paste> {
  const hash = ctx.params['hash'] ?? '';
  // A malformed hash is answered like a missing paste, before any file is touched.
  if (!HASH_RE.test(hash)) return Promise.reject(new PasteError('not_found'));
  return ctx.deps.pastes.peek(hash, ctx.viewer);
}

/** A HEAD asks what a GET would answer without being a read: no view is counted. */
const consumes = (ctx: WebContext): boolean => ctx.method !== 'HEAD';

/**
 * Whom to read `p` as without a password now, or null when its password form is due: the
 * viewer, when the paste needs no password from them; else, with a live unlock grant for
 * it, its owner. The service knows no grants, so the grant is spent as the owner's view;
 * the visibility rules were already applied to the real viewer by `visiblePaste`.
 */
export function readerWithoutPassword(ctx: WebContext, p: Paste): { proof?: PasswordProof } | null {
  if (!needsPassword(p, ctx.viewer)) return {};
  const grant = ctx.cookies.get(unlockCookieName(p.hash, ctx.secure));
  // Checked again by the service against the paste as it is at the read itself; a grant
  // already verified against that very object (the same version) needs no second HMAC.
  let verified: Paste | undefined;
  const proof: PasswordProof = (cur) => {
    if (cur === verified) return true;
    if (!hasUnlockGrant(ctx.deps.signer, cur, grant, ctx.deps.now())) return false;
    verified = cur;
    return true;
  };
  return proof(p) ? { proof } : null;
}

/** A read without a password (none needed, or an unlock grant stands in for it); at once when the paste is cached. */
const readAs = (ctx: WebContext, p: Paste, proof: PasswordProof | undefined): Counted | Promise<Counted> =>
  ctx.deps.pastes.read(p.hash, ctx.viewer, { proof, client: ctx.clientKey, consume: consumes(ctx) });

/** The reply with a fresh unlock grant for `p` when its password was just given. */
function withGrant(ctx: WebContext, p: Paste, r: Reply): Reply {
  if (!needsPassword(p, ctx.viewer)) return r;
  ctx.setCookies.push(unlockCookie(ctx.deps.signer, p, ctx.deps.now(), ctx.secure));
  return r;
}

function passwordField(autofocus: boolean): ReturnType<typeof html> {
  return html`<div class="field"><label for="password">Password</label><input type="password" id="password" \
name="password" autocomplete="off" required${autofocus ? html` autofocus` : ''}></div>`;
}

/** The warning a one-time paste shows on GET: nothing is revealed or burned until the POST. */
function burnWarning(ctx: WebContext, p: Paste, problems: string[], status: number): Reply {
  return reply(burnWarningPage(ctx, p, problems, ctx.csrf()), status);
}

/**
 * The warning as a visitor who is not logged in first sees it: the same for every such
 * visitor but the form's CSRF token, so it is written once per paste version and sent as
 * bytes around a fresh token (page-parts.ts).
 */
function anonymousWarning(ctx: WebContext, p: Paste): Reply {
  const body = ctx.deps.parts.page('warning', p, 0, raw(ctx.csrf()), (token) => burnWarningPage(ctx, p, [], token));
  return { kind: 'bytes', status: 200, contentType: 'text/html; charset=utf-8', body };
}

function burnWarningPage(ctx: WebContext, p: Paste, problems: string[], csrf: string | SafeHtml): string {
  const needsPw = needsPassword(p, ctx.viewer);
  const body = html`<section class="card medium warning-card">
${FIRE}
<h1>${BURN_TITLE}</h1>
<p>This paste can be read <strong>only once</strong>. When you open it, it is shown to you and deleted from the server \
at the same moment; the link stops working for everyone.</p>
<p class="muted small">Make sure you are ready to copy or save it. Link previews and crawlers do not \
open it: only this button does.</p>
${problemList(problems)}
<form method="post" action="/p/${p.hash}"${keepKey(p)}>
${csrfInput(csrf)}
${needsPw ? passwordField(problems.length > 0) : ''}
<button class="btn btn-danger btn-block" type="submit">Show it and burn it</button>
</form>
<p class="small"><a href="/">Not now</a></p>
</section>
${
  ctx.viewer?.userId === p.owner_id
    ? html`<div class="medium owner-share">${notice(
        'info',
        'You created this one-time paste. Share the link below; opening it yourself would use up its only view.',
      )}${shareCard(ctx, p)}</div>`
    : ''
}`;
  return page(ctx, BURN_TITLE, body);
}

/** Asks for a paste's password; `action` is the page or the raw address to post it to. */
export function passwordGate(ctx: WebContext, p: Paste, action: string, problems: string[], status: number): Reply {
  const body = html`<section class="card narrow warning-card">
${LOCK}
<h1>Password required</h1>
<p class="muted">This paste is protected by a password. Enter it to read the paste.</p>
${problemList(problems)}
<form method="post" action="${action}"${keepKey(p)}>
${csrfInput(ctx.csrf())}
${passwordField(true)}
<button class="btn btn-primary btn-block" type="submit">Unlock</button>
</form>
</section>`;
  return reply(page(ctx, 'Password required', body), status);
}

/**
 * Reads a paste with a submitted password. Returns the read, or the page to answer instead:
 * the form again (401 nothing given, 403 wrong password, 429 guessing too fast: the
 * client's budget for this paste, shared with the API).
 */
async function readWithPassword(
  ctx: WebContext,
  p: Paste,
  gate: (problems: string[], status: number) => Reply,
): Promise<Counted | Reply> {
  const needsPw = needsPassword(p, ctx.viewer);
  const password = field(ctx.form, 'password');
  if (needsPw && password === '') return gate(['Enter the password.'], 401);
  try {
    return await ctx.deps.pastes.read(p.hash, ctx.viewer, {
      password: needsPw ? password : undefined,
      client: ctx.clientKey,
      consume: consumes(ctx),
    });
  } catch (err) {
    if (!(err instanceof PasteError)) throw err;
    if (err.kind === 'wrong_password') return gate(['That password is wrong.'], 403);
    if (err.kind === 'too_many_guesses' && err.limit !== undefined) {
      const wait = err.limit.retryAfterSec;
      ctx.headers['retry-after'] = String(wait);
      return gate([`Too many attempts. Wait ${wait} seconds and try again.`], 429);
    }
    throw err;
  }
}

/**
 * GET /p/{hash}: the paste, or first its burn warning or password form. A cached paste is
 * answered without a promise, as the API's reads are (the page people open most).
 */
export function viewPaste(ctx: WebContext): Reply | Promise<Reply> {
  const hash = ctx.params['hash'] ?? '';
  if (!HASH_RE.test(hash)) return Promise.reject(new PasteError('not_found'));
  // A long paste is read only as far as its page shows it (README, Web pages).
  const p = ctx.deps.pastes.peekHead(hash, ctx.viewer, PAGE_HEAD_CHARS);
  return p instanceof Promise ? p.then((found) => viewVisible(ctx, found.paste)) : viewVisible(ctx, p.paste);
}

function viewVisible(ctx: WebContext, p: Paste): Reply | Promise<Reply> {
  if (p.burn_after_read === 1) return ctx.user === null ? anonymousWarning(ctx, p) : burnWarning(ctx, p, [], 200);
  const reader = readerWithoutPassword(ctx, p);
  if (reader === null) return passwordGate(ctx, p, `/p/${p.hash}`, [], 401);
  allowRemoteImages(ctx, p);
  allowBlobImages(ctx, p);
  // Text files are read from their store before the page is written (web/file-view.ts).
  const views = (counted: HeadCounted): Reply | Promise<Reply> => {
    const made = fileViews(ctx, counted.paste);
    return made === undefined ? shown(counted) : made.then((files) => shown(counted, files));
  };
  const shown = (counted: HeadCounted, files?: Map<string, CodeView>): Reply | Promise<Reply> => {
    const page = (sized: HeadCounted, code?: CodeView | null): Reply =>
      ctx.user === null ? anonymousView(ctx, sized, code, files) : reply(pasteView(ctx, sized, false, code, files));
    const sized = (size: TextSize | undefined): Reply | Promise<Reply> => {
      const known = size === undefined ? counted : { ...counted, size };
      const code = pasteCodeApart(ctx, known);
      return code === undefined ? page(known) : code.then((made) => page(known, made));
    };
    const size = pasteSize(ctx, counted);
    return size instanceof Promise ? size.then(sized) : sized(size);
  };
  const counted = ctx.deps.pastes.readHead(
    p.hash,
    ctx.viewer,
    { proof: reader.proof, client: ctx.clientKey, consume: consumes(ctx) },
    PAGE_HEAD_CHARS,
  );
  return counted instanceof Promise ? counted.then(views) : views(counted);
}

/**
 * The page an anonymous visitor gets: the same for every such visitor but its view count
 * (it has no form, so no token, and no links of a user), so it is written once per paste
 * version and minute and sent as bytes around the count (page-parts.ts).
 */
function anonymousView(
  ctx: WebContext,
  { paste, viewCount, size }: HeadCounted,
  code?: CodeView | null,
  files?: Map<string, CodeView>,
): Reply {
  const minute = Math.floor(ctx.deps.now() / 60_000);
  // A Markdown paste's source view is a page of its own (markdown-view.ts).
  const kind = paste.language === 'markdown' && !showsRendered(ctx, paste) ? 'source' : 'paste';
  const body = ctx.deps.parts.page(kind, paste, minute, raw(String(viewCount)), (count) =>
    pasteView(ctx, { paste, viewCount: count, ...(size === undefined ? {} : { size }) }, false, code, files),
  );
  return { kind: 'bytes', status: 200, contentType: 'text/html; charset=utf-8', body };
}

/** POST /p/{hash}: the confirmed burn, or the password; reveals the paste. */
export async function unlockPaste(ctx: WebContext): Promise<Reply> {
  const p = await visiblePaste(ctx);
  const burn = p.burn_after_read === 1;
  const gate = (problems: string[], status: number): Reply =>
    burn ? burnWarning(ctx, p, problems, status) : passwordGate(ctx, p, `/p/${p.hash}`, problems, status);
  const shown = await readWithPassword(ctx, p, gate);
  if ('kind' in shown) return shown;
  allowRemoteImages(ctx, p);
  allowBlobImages(ctx, p);
  const size = burn ? undefined : await pasteSize(ctx, shown);
  const files = await fileViews(ctx, shown.paste);
  const page = reply(pasteView(ctx, size === undefined ? shown : { ...shown, size }, burn, undefined, files));
  // A one-time paste is gone after this showing; there is nothing left to come back to.
  return burn ? page : withGrant(ctx, p, page);
}

/** GET /p/{hash}/raw: the text alone. A one-time paste sends the reader to its warning. */
export async function rawPaste(ctx: WebContext): Promise<Reply> {
  const p = await visiblePaste(ctx);
  if (p.burn_after_read === 1) return redirect(`/p/${p.hash}`);
  const reader = readerWithoutPassword(ctx, p);
  if (reader === null) return passwordGate(ctx, p, `/p/${p.hash}/raw`, [], 401);
  const body = contentOf((await readAs(ctx, p, reader.proof)).paste);
  if (field(ctx.query, 'download') !== '1') return text(body);
  // Download (README, Web pages): a file named after the title, with its language's extension.
  return {
    kind: 'text',
    status: 200,
    body,
    headers: { 'content-disposition': `attachment; filename="${downloadName(p)}"` },
  };
}

/**
 * GET /p/{hash}/files/{name}: one file of a paste (README, Files), under the paste's read
 * rules as its page applies them: private to its owner, a password paste after its unlock
 * (the form posts to the page, whose grant then opens its files too). Nothing is counted.
 */
export async function pasteFile(ctx: WebContext): Promise<Reply> {
  let name: string;
  try {
    name = decodeURIComponent(ctx.params['name'] ?? '');
  } catch {
    // decodeURIComponent throws URIError only: a name no link of ours makes.
    throw new PasteError('file_not_found');
  }
  const grant = field(ctx.query, 'grant');
  if (grant !== '') {
    // A burned paste's file, from the page that burned it: the grant is the key (paste/file-grant.ts).
    const hash = ctx.params['hash'] ?? '';
    if (!HASH_RE.test(hash)) throw new PasteError('not_found');
    return grantedFileReply(ctx.deps.pastes, ctx.deps.signer, { hash, name, grant, head: ctx.req.method === 'HEAD' });
  }
  const p = await visiblePaste(ctx);
  const reader = readerWithoutPassword(ctx, p);
  if (reader === null) return passwordGate(ctx, p, `/p/${p.hash}`, [], 401);
  const served = await ctx.deps.pastes.file(p.hash, name, ctx.viewer, {
    proof: reader.proof,
    client: ctx.clientKey,
    consume: false,
  });
  return fileReply(served, {}, ctx.req.headers['if-none-match']);
}

/**
 * GET /p/{hash}/qr.svg: the QR code of the paste's short link, the share card's image. Seen
 * by whoever may see the paste (README, Web pages); it never counts or burns a view. A
 * browser keeps it for a day and then asks again with its ETag, which changes only with
 * the link (BASE_URL).
 */
export async function pasteQr(ctx: WebContext): Promise<Reply> {
  const p = await visiblePaste(ctx);
  const link = shortUrl(ctx, p);
  const etag = `"qr-${createHash('sha256').update(link).digest('base64url').slice(0, 16)}"`;
  const headers = { etag, 'cache-control': 'private, max-age=86400', 'content-security-policy': "default-src 'none'" };
  if (namesEtag(ctx.req.headers['if-none-match'], etag, false))
    return { kind: 'bytes', status: 304, contentType: 'image/svg+xml', body: Buffer.alloc(0), headers };
  return {
    kind: 'bytes',
    status: 200,
    contentType: 'image/svg+xml',
    body: utf8Bytes(ctx.deps.parts.qr(link, `QR code for ${link}`)),
    headers,
  };
}

const EXTENSIONS: Readonly<Record<string, string>> = {
  text: 'txt',
  javascript: 'js',
  typescript: 'ts',
  python: 'py',
  php: 'php',
  ruby: 'rb',
  go: 'go',
  rust: 'rs',
  java: 'java',
  c: 'c',
  cpp: 'cpp',
  csharp: 'cs',
  bash: 'sh',
  sql: 'sql',
  html: 'html',
  css: 'css',
  json: 'json',
  yaml: 'yaml',
  markdown: 'md',
  xml: 'xml',
  dockerfile: 'dockerfile',
  diff: 'diff',
  ini: 'ini',
  kotlin: 'kt',
  swift: 'swift',
  lua: 'lua',
};

/** A safe file name for a paste: its title's letters, digits, dots, dashes and underscores, and an extension. */
export function downloadName(p: Pick<Paste, 'title' | 'hash' | 'language'>): string {
  const ext = EXTENSIONS[p.language] ?? 'txt';
  const base =
    p.title
      .replace(/[^A-Za-z0-9._-]+/g, '-')
      .replace(/^[-.]+|[-.]+$/g, '')
      .slice(0, 80) || `paste-${p.hash}`;
  // The language's extension always goes last: a title "setup.exe" or "report.html" on a text
  // paste must not download as something a click would run or render.
  return base.toLowerCase().endsWith(`.${ext}`) ? base : `${base}.${ext}`;
}

/** POST /p/{hash}/raw: the text alone, after its password. */
export async function rawPasteUnlock(ctx: WebContext): Promise<Reply> {
  const p = await visiblePaste(ctx);
  if (p.burn_after_read === 1) return redirect(`/p/${p.hash}`, 303);
  const shown = await readWithPassword(ctx, p, (problems, status) =>
    passwordGate(ctx, p, `/p/${p.hash}/raw`, problems, status),
  );
  return 'kind' in shown ? shown : withGrant(ctx, p, text(contentOf(shown.paste)));
}

/**
 * GET /s/{code}: the short link, a 302 to the paste page (README, Short links and health). It needs no token;
 * a private paste's link works only for its owner and admins, and is a 404 to anyone else.
 * Misses spend the client's budget (PasteService.byShortcode).
 */
export async function shortLink(ctx: WebContext): Promise<Reply> {
  const code = ctx.params['code'] ?? '';
  if (!SHORTCODE_RE.test(code)) throw new PasteError('not_found');
  const p = await ctx.deps.pastes.byShortcode(code, ctx.viewer, ctx.clientKey);
  return redirect(`${ctx.deps.config.baseUrl}/p/${p.hash}`);
}
