import type { Paste } from '../paste/paste.ts';
import { codeView, hasBidiControls, type CodeView } from './code-view.ts';
import { field, type WebContext } from './context.ts';
import { html, raw, type SafeHtml } from './html.ts';
import { markdownRenderer } from './markdown.ts';

/**
 * The longest Markdown a page renders: the renderer works on the whole text at once, so this
 * bounds how long a first view holds the event loop; a longer text is shown as its
 * highlighted source, as `?view=source` shows any.
 */
export const MARKDOWN_MAX_CHARS = 32 * 1024;

/** Whether `p`'s page shows its Markdown rendered: a `markdown` paste, not asked for its source. */
export const showsRendered = (ctx: Pick<WebContext, 'query'>, p: Pick<Paste, 'language' | 'encrypted'>): boolean =>
  p.language === 'markdown' && p.encrypted !== 1 && field(ctx.query, 'view') !== 'source';

/** A renderer for a server's settings, made once for each. */
const renderers = new WeakMap<object, (source: string) => string>();

function rendererOf(config: WebContext['deps']['config']): (source: string) => string {
  let render = renderers.get(config);
  if (render === undefined) {
    render = markdownRenderer({ remoteImages: config.markdownRemoteImages, baseUrl: config.baseUrl });
    renderers.set(config, render);
  }
  return render;
}

function countLines(s: string): number {
  let n = 0;
  for (let i = s.indexOf('\n'); i !== -1; i = s.indexOf('\n', i + 1)) n++;
  return s === '' || s.endsWith('\n') ? n : n + 1;
}

/** The view of a Markdown text, rendered; its source, highlighted, past MARKDOWN_MAX_CHARS. */
export function markdownView(ctx: Pick<WebContext, 'deps'>, id: string, content: string): CodeView {
  if (content.length > MARKDOWN_MAX_CHARS) return codeView(id, { content, language: 'markdown', highlight: 1 });
  const bytes = Buffer.byteLength(content);
  const lines = countLines(content);
  return {
    block: html`<article class="markdown" id="${id}">${raw(rendererOf(ctx.deps.config)(content))}</article>`,
    lines,
    bytes,
    cut: false,
    shownLines: lines,
    shownBytes: bytes,
    bidi: hasBidiControls(content),
    rendered: true,
  };
}

/** The link between a Markdown paste's two views, for its code card's tools. */
export function viewSwitch(p: Pick<Paste, 'hash' | 'language'>, code: CodeView): SafeHtml | '' {
  if (p.language !== 'markdown') return '';
  return code.rendered === true
    ? html`<a class="btn btn-sm" href="/p/${p.hash}?view=source">Source</a>`
    : html`<a class="btn btn-sm" href="/p/${p.hash}">Rendered</a>`;
}

/**
 * With MARKDOWN_REMOTE_IMAGES, a rendered Markdown page's policy lets images come from
 * anywhere (and only images: scripts, styles and frames stay this server's alone).
 */
export function allowRemoteImages(ctx: Pick<WebContext, 'deps' | 'query' | 'headers'>, p: Paste): void {
  if (!ctx.deps.config.markdownRemoteImages || !showsRendered(ctx, p)) return;
  const policy = ctx.headers['content-security-policy'];
  if (typeof policy === 'string') {
    ctx.headers['content-security-policy'] = policy.replace(
      "img-src 'self' data:",
      "img-src 'self' data: https: http:",
    );
  }
}
