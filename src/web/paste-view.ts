import { ANONYMOUS_NAME, isAnonymous } from '../paste/anonymous.ts';
import { owns } from '../paste/access.ts';
import { FILE_GRANT_MS, filesOf } from '../paste/files.ts';
import { fileGrant } from '../paste/file-grant.ts';
import { contentOf, NO_CONTENT, shortcodeOf, type Paste } from '../paste/paste.ts';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { literalHead, literalSizeNow, type TextSize } from '../paste/literal.ts';
import type { HeadCounted } from '../paste/service.ts';
import { codeView, PAGE_HEAD_CHARS, shownText, type CodeView } from './code-view.ts';
import { highlightSteps } from './highlight.ts';
import { fileLanguage } from './file-language.ts';
import type { WebContext } from './context.ts';
import { sealedCard, sealedLede, sealedShare } from './encrypted-view.ts';
import { notice } from './forms.ts';
import { html, isolate, type SafeHtml } from './html.ts';
import { languageLabel, pasteLanguageLabel } from './languages.ts';
import { isDear, isLong } from './page-parts.ts';
import { page } from './layout.ts';
import { markdownView, showsRendered, viewSwitch } from './markdown-view.ts';
import { sizeLabel } from './size-label.ts';

export const pasteTitle = (p: Pick<Paste, 'title'>): string => (p.title === '' ? 'Untitled paste' : p.title);

export const shortUrl = (ctx: WebContext, p: Pick<Paste, 'hash'>): string =>
  `${ctx.deps.config.baseUrl}/s/${shortcodeOf(p.hash)}`;

/**
 * The code block of the paste page, made once per version (page-parts.ts); a one-time
 * paste's only showing is made for it alone, and shows all of the text. An encrypted
 * paste's text is the browser's to read (encrypted-view.ts): null. A long text's block is
 * made from its beginning, given the whole one's `size` (`pasteSize`).
 */
function pasteCode(
  ctx: WebContext,
  { paste: p, size }: Pick<HeadCounted, 'paste' | 'size'>,
  burnedNow: boolean,
  made?: { text: string; lines: string[] },
): CodeView | null {
  if (p.encrypted === 1) return null;
  if (burnedNow)
    return codeView('paste-code', { content: contentOf(p), language: p.language, highlight: p.highlight }, true);
  if (size === undefined && !isLong(p))
    return showsRendered(ctx, p)
      ? ctx.deps.parts.markdown(p, () => markdownView(ctx, 'paste-code', contentOf(p)))
      : ctx.deps.parts.code('paste-code', p, () => made?.text ?? contentOf(p), made?.lines);
  const known = size ?? ctx.deps.parts.sizeOf(p);
  // Callers wait for `pasteSize` first; a size still being counted is counted here at once.
  return ctx.deps.parts.longCode(
    'paste-code',
    p,
    known instanceof Promise ? literalSizeNow(p.content_json) : known,
    made,
  );
}

/**
 * The code block of a page of `counted` (its `size` given when `pasteSize` answered one),
 * made between turns of the event loop when it is dear and not kept yet: decoding the text,
 * each slice of its highlighting and writing the page then hold the loop apart.
 * Undefined: the page makes it (cheap, kept, or no text to show).
 */
export function pasteCodeApart(ctx: WebContext, counted: HeadCounted): Promise<CodeView | null> | undefined {
  const p = counted.paste;
  if (p.encrypted === 1 || (counted.size === undefined && !isDear(p)) || ctx.deps.parts.hasCode('paste-code', p))
    return undefined;
  return codeApart(ctx, counted);
}

async function codeApart(ctx: WebContext, counted: HeadCounted): Promise<CodeView | null> {
  const p = counted.paste;
  await nextTurn();
  let made: { text: string; lines: string[] } | undefined;
  if (p.highlight === 1 && !showsRendered(ctx, p)) {
    const text = counted.size !== undefined || isLong(p) ? literalHead(p.content_json, PAGE_HEAD_CHARS) : contentOf(p);
    const steps = highlightSteps(shownText(text), p.language);
    for (let step = steps.next(); ; step = steps.next()) {
      await nextTurn();
      if (step.done === true) {
        made = { text, lines: step.value };
        break;
      }
    }
  }
  const code = pasteCode(ctx, counted, false, made);
  await nextTurn();
  return code;
}

/**
 * What the paste page of `counted` must wait for before it is written: the size of a long
 * text held whole (page-parts.ts, sizeOf), counted between other work. Undefined: nothing.
 */
export function pasteSize(ctx: WebContext, counted: HeadCounted): TextSize | undefined | Promise<TextSize> {
  const p = counted.paste;
  if (counted.size !== undefined || p.encrypted === 1 || !isLong(p)) return counted.size;
  return ctx.deps.parts.sizeOf(p);
}

/** Small labels for a paste's language, privacy and special behaviour. */
export function pasteBadges(p: Paste, now: number): SafeHtml {
  const expired = p.expire_at !== null && p.expire_at <= now;
  return html`<span class="badges">
<span class="badge badge-accent">${pasteLanguageLabel(p)}</span>
${
  p.privacy === 'public'
    ? ''
    : html`<span class="badge${p.privacy === 'private' ? ' badge-private' : ''}">${p.privacy}</span>`
}
${p.burn_after_read === 1 ? html`<span class="badge badge-burn">${p.burned ? 'burned' : 'burn after read'}</span>` : ''}
${p.password !== null ? html`<span class="badge">password</span>` : ''}
${p.encrypted === 1 && pasteLanguageLabel(p) !== 'Encrypted' ? html`<span class="badge">encrypted</span>` : ''}
${expired ? html`<span class="badge badge-bad">expired</span>` : ''}
</span>`;
}

/**
 * A URL that may wrap after its scheme, before a dot of its host and before `/s/`, never
 * inside a label or the port: the box's `overflow-wrap: anywhere` then breaks only a part
 * wider than the box on its own.
 */
const breakable = (url: string): SafeHtml => {
  const m = /^([a-z]+:\/\/)([^/]*)(.*)$/.exec(url);
  if (m === null) return html`${url}`;
  const [, scheme, host, path] = m as unknown as [string, string, string, string];
  const labels = host.split('.').map((label, i) => (i === 0 ? html`${label}` : html`<wbr>.${label}`));
  return html`${scheme}<wbr>${labels}${path === '' ? '' : html`<wbr>${path}`}`;
};

/**
 * The short link with its QR code and a copy button. The QR code is an image of its own
 * (`/p/{hash}/qr.svg`, pages/paste.ts), made when a browser first asks for it and kept by
 * the browser, so a page view never waits for the QR encoder (bench/README.md, Measured limits).
 */
export function shareCard(ctx: WebContext, p: Pick<Paste, 'hash'>): SafeHtml {
  const link = shortUrl(ctx, p);
  return html`<aside class="card share" aria-label="Short link">
<span class="label">Short link</span>
<span class="qr"><img src="/p/${p.hash}/qr.svg" width="134" height="134" alt="QR code for ${link}"></span>
<a class="shortlink-text" id="short-url" href="${link}">${breakable(link)}</a>
<button class="btn btn-sm" type="button" data-copy="short-url" hidden>Copy link</button>
</aside>`;
}

const PRIVACY_WORDS: Record<Paste['privacy'], string> = { public: 'Public', unlisted: 'Unlisted', private: 'Private' };

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;

/**
 * The page of a paste being read. `burnedNow` marks the one showing of a one-time paste:
 * there is no raw link or short link then, since both already lead to nothing.
 */
export function pasteView(
  ctx: WebContext,
  counted: Omit<HeadCounted, 'viewCount'> & { viewCount: number | SafeHtml },
  burnedNow: boolean,
  made?: CodeView | null,
  fileCode?: ReadonlyMap<string, CodeView>,
): string {
  const { paste: p, viewCount } = counted;
  const code = made !== undefined ? made : pasteCode(ctx, counted, burnedNow);
  const { times } = ctx.deps;
  const now = ctx.deps.now();
  const owner = isAnonymous(p) ? ANONYMOUS_NAME : (ctx.deps.accounts.user(p.owner_id)?.name ?? 'a former user');
  const mine = owns(ctx.viewer, p);
  const sealed = p.encrypted === 1;
  const share = burnedNow ? '' : sealed ? sealedShare() : shareCard(ctx, p);
  const lede =
    code === null
      ? sealedLede(p)
      : onlyFiles(p)
        ? plural(filesOf(p).length, 'file')
        : html`${plural(code.lines, 'line')} of ${p.language === 'text' ? 'plain text' : languageLabel(p.language)} \
&middot; ${sizeLabel(code.bytes)}`;
  const ownerTools =
    mine && !burnedNow
      ? html`<span class="owner-tools"><a class="btn btn-sm btn-ghost" href="/p/${p.hash}/edit"\
${sealed ? html` data-keep-key` : ''}>Edit</a><a class="btn btn-sm btn-ghost" \
href="/p/${p.hash}/delete">Delete</a></span>`
      : '';
  const body = html`${
    burnedNow
      ? notice(
          'warn',
          html`<strong>This paste is now burned.</strong> This is its one and only view: it has been deleted from the \
server. Copy what you need before you leave this page.`,
        )
      : ''
  }
<div class="paste-layout">
<section class="card paste-head">
<div class="head-top">${pasteBadges(p, now)}${ownerTools}</div>
<h1 class="paste-title">${isolate(pasteTitle(p))}</h1>
<p class="lede">${lede}</p>
<dl class="facts">
<div><dt>Author</dt><dd>${isolate(owner)}</dd></div>
<div><dt>Created</dt><dd>${times.tag(p.created_at, now)}</dd></div>
<div><dt>Expires</dt><dd>${p.expire_at === null ? 'Never' : times.tag(p.expire_at, now)}</dd></div>
<div><dt>Views</dt><dd>${viewCount}</dd></div>
<div><dt>Visibility</dt><dd>${PRIVACY_WORDS[p.privacy]}</dd></div>
${
  p.updated_at !== p.created_at && !burnedNow
    ? html`<div><dt>Edited</dt><dd>${times.tag(p.updated_at, now)}</dd></div>`
    : ''
}
${
  (p.revision ?? 1) > 1 && !burnedNow
    ? html`<div><dt>Revisions</dt><dd><a href="/p/${p.hash}/history">${p.revision ?? 1}, see the history</a></dd></div>`
    : ''
}
</dl>
</section>
${share}
${code === null ? sealedCard(p) : onlyFiles(p) ? '' : codeCard(p, code, burnedNow)}
${filesCard(ctx, p, counted.burnedAt, fileCode)}
</div>`;
  return page(ctx, pasteTitle(p), body);
}

/** A paste of files and no text: its page shows no code block. */
const onlyFiles = (p: Paste): boolean => p.content_json === NO_CONTENT && filesOf(p).length > 0;

/** Types shown in the page as images (served inline only when their bytes are one: pipeline/file-reply.ts). */
const IMAGE_TYPES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);

/**
 * The card of a paste's files (README, Files): each name (escaped, kept apart from the text
 * around it), its size and a link to it; images shown in the page. The showing that burns a
 * one-time paste links each file with its grant, good once (paste/file-grant.ts), and shows
 * no image in the page, which would spend it; otherwise a one-time paste's files are not linked.
 */
function filesCard(
  ctx: WebContext,
  p: Paste,
  burnedAt: number | undefined,
  fileCode: ReadonlyMap<string, CodeView> | undefined,
): SafeHtml | '' {
  const files = filesOf(p);
  if (files.length === 0) return '';
  const linked = p.burn_after_read === 0 || burnedAt !== undefined;
  // An encrypted paste's files are envelopes: the browser fetches, decrypts and names them (client/encrypted-paste.ts).
  const sealed = p.encrypted === 1;
  const items = files.map((f) => {
    const grant = burnedAt === undefined ? '' : `?grant=${fileGrant(ctx.deps.signer, p.hash, burnedAt, f)}`;
    const href = `/p/${p.hash}/files/${encodeURIComponent(f.name)}${grant}`;
    if (sealed)
      return html`<li${linked ? html` data-sealed-file="${href}"` : ''}><span class="file-name">Encrypted file</span> \
<span class="muted">${sizeLabel(f.size)}</span></li>`;
    const name = linked
      ? html`<a class="file-name" href="${href}">${isolate(f.name)}</a>`
      : html`<span class="file-name">${isolate(f.name)}</span>`;
    const image =
      p.burn_after_read === 0 && IMAGE_TYPES.has(f.type)
        ? html`<img class="file-image" src="${href}" alt="${f.name}" loading="lazy">`
        : '';
    const code = fileCode?.get(f.name);
    const language = code === undefined ? '' : html` &middot; ${languageLabel(fileLanguage(f.name) ?? 'text')}`;
    const block = code === undefined ? '' : fileCodeBlock(code, href);
    return html`<li>${name} <span class="muted">${sizeLabel(f.size)}${language}</span>${image}${block}</li>`;
  });
  return html`<section class="card files-card" aria-label="Files">
<div class="card-head"><h2>${plural(files.length, 'file')}</h2>${
    p.burn_after_read === 0 && !sealed
      ? html`<a class="btn btn-sm" href="/p/${p.hash}/files.zip" download>Download all (zip)</a>`
      : ''
  }</div>
${
  burnedAt === undefined
    ? ''
    : html`<p class="muted small">Each file opens once, in the next ${FILE_GRANT_MS / 60_000} minutes: save what you \
open.</p>`
}
<ul class="file-list">${items}</ul>
</section>`;
}

/** A text file shown in the page (file-view.ts), with the page's note when it is too long to show whole. */
const fileCodeBlock = (code: CodeView, href: string): SafeHtml =>
  html`<div class="file-code">${code.block}${
    code.cut
      ? notice(
          'info',
          html`This file is long: the page shows only its first ${sizeLabel(code.shownBytes)} (${code.shownLines} of \
${plural(code.lines, 'line')}). <a href="${href}">The file</a> has all of it.`,
        )
      : ''
  }</div>`;

/** The card of a paste's text: its tools, its code block and what the page says about the text. */
function codeCard(p: Paste, code: CodeView, burnedNow: boolean): SafeHtml {
  return html`<section class="card code-card">
<div class="code-bar"><span class="info">${languageLabel(p.language)}${
    p.highlight === 1 ? '' : html` &middot; not highlighted`
  }</span>
<span class="tools">${viewSwitch(p, code)}<button class="btn btn-sm" type="button" data-wrap aria-pressed="false" \
hidden>Wrap</button>${
    burnedNow
      ? ''
      : html`<a class="btn btn-sm" href="/p/${p.hash}/raw">Raw</a><a class="btn btn-sm" \
href="/p/${p.hash}/raw?download=1" download>Download</a><a class="btn btn-sm" href="/?from=${p.hash}">New from this</a>`
  }${
    code.cut ? '' : html`<button class="btn btn-sm" type="button" data-copy="paste-code" hidden>Copy</button>`
  }</span></div>
${code.block}
${
  code.bidi
    ? notice(
        'warn',
        html`This paste contains invisible characters that change the direction of the text around them, so code can \
read differently from how it runs. Each is shown marked with its code point, like <span class="bidi" \
data-cp="U+202E"></span>.`,
      )
    : ''
}
${
  code.cut
    ? notice(
        'info',
        html`This paste is long: the page shows only its first ${sizeLabel(code.shownBytes)} (${code.shownLines} of \
${plural(code.lines, 'line')}). <a href="/p/${p.hash}/raw">Raw</a> has all of it.`,
      )
    : ''
}
</section>`;
}
