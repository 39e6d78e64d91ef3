import MarkdownIt from 'markdown-it';
import type Token from 'markdown-it/lib/token.mjs';
import { languageNamed } from '../paste/language.ts';
import { markBidi } from './code-view.ts';
import { highlight } from './highlight.ts';
import { escapeHtml } from './html.ts';

/**
 * Markdown as HTML for a paste's page (README, Markdown), from text anyone may have written:
 * markdown-it with raw HTML off (it comes out escaped), links only to http, https, mailto
 * or a relative address, images only from this server unless the operator allows others,
 * fenced code through our own highlighter, and ids prefixed so no heading can take the
 * name of an element of the page around it.
 */

export interface MarkdownOptions {
  /** MARKDOWN_REMOTE_IMAGES: images from other servers are shown (each tells its host who read the paste). */
  remoteImages: boolean;
  /** BASE_URL: an absolute image address on it is this server's own. */
  baseUrl: string;
}

/** A heading's id (and a `#` link's target) starts with this, apart from the page's own ids. */
export const ID_PREFIX = 'md-';

/** `url` with its percent-escapes decoded where they decode (markdown-it escapes what it finds). */
function decoded(url: string): string {
  try {
    return decodeURIComponent(url);
  } catch {
    return url;
  }
}

/** The scheme of an address once browsers' leniency is undone: escapes, controls and spaces, case. */
function schemeOf(url: string): string | null {
  const squeezed = decoded(url)
    .replace(/[\u0000-\u0020\u007f-\u009f\u00ad\u200b-\u200f\u2028\u2029\ufeff]/g, '')
    .toLowerCase();
  const m = /^([a-z][a-z0-9+.-]*):/.exec(squeezed);
  return m === null ? null : (m[1] ?? null);
}

const LINK_SCHEMES = new Set(['http', 'https', 'mailto']);

/** A link may go to http, https, mailto, or anywhere relative; nothing else is made a link. */
export const safeLink = (url: string): boolean => {
  const scheme = schemeOf(url);
  return scheme === null || LINK_SCHEMES.has(scheme);
};

/** An image address this server serves: relative (not `//host`), or on BASE_URL's origin. */
function ownImage(src: string, baseUrl: string): boolean {
  if (schemeOf(src) === null) return !/^[\s/\\]{2}/.test(src);
  try {
    return new URL(src).origin === new URL(baseUrl).origin;
  } catch {
    return false;
  }
}

/** A heading's text as an id: letters and digits of any script, dashes between words. */
function slug(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .trim()
    .replace(/\s+/g, '-')
    .slice(0, 80);
}

const inlineText = (token: Token | undefined): string =>
  (token?.children ?? []).map((t) => (t.type === 'text' || t.type === 'code_inline' ? t.content : '')).join('');

/** `- [ ] ` and `- [x] ` items: a checkbox the reader cannot tick, as on GitHub. */
const TASK = /^\[([ xX])\] /;

function taskLists(tokens: Token[], make: (type: string) => Token): void {
  for (let i = 2; i < tokens.length; i++) {
    const inline = tokens[i];
    if (inline?.type !== 'inline' || tokens[i - 1]?.type !== 'paragraph_open') continue;
    const item = tokens[i - 2];
    const first = inline.children?.[0];
    const m = first?.type === 'text' ? TASK.exec(first.content) : null;
    if (item?.type !== 'list_item_open' || first === undefined || m === null) continue;
    first.content = first.content.slice(m[0].length);
    const box = make('html_inline');
    box.content = `<input type="checkbox" disabled${m[1] === ' ' ? '' : ' checked'}> `;
    inline.children?.unshift(box);
    item.attrJoin('class', 'task');
  }
}

/** A table column's alignment as a class (assets' stylesheet), not the style attribute the CSP forbids. */
function alignClasses(tokens: Token[]): void {
  for (const t of tokens) {
    if (t.type !== 'th_open' && t.type !== 'td_open') continue;
    const align = /text-align:(left|center|right)/.exec(t.attrGet('style') ?? '')?.[1];
    t.attrs = null;
    if (align !== undefined) t.attrSet('class', `align-${align}`);
  }
}

function headingIds(tokens: Token[]): void {
  const seen = new Map<string, number>();
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i];
    if (t?.type !== 'heading_open') continue;
    const base = slug(inlineText(tokens[i + 1])) || 'section';
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    t.attrSet('id', `${ID_PREFIX}${n === 0 ? base : `${base}-${n}`}`);
  }
}

/** Fenced or indented code, highlighted as the language its fence names (text if none we know). */
function codeBlock(content: string, info: string): string {
  const asked = (info.trim().split(/\s+/, 1)[0] ?? '').toLowerCase();
  const language = (asked === '' ? undefined : languageNamed(asked)) ?? 'text';
  const lines = highlight(content.endsWith('\n') ? content.slice(0, -1) : content, language);
  return `<pre class="md-code"><code>${lines.map(markBidi).join('\n')}</code></pre>\n`;
}

/** A renderer for one server's settings; it holds no state between documents. */
export function markdownRenderer(options: MarkdownOptions): (source: string) => string {
  const md = new MarkdownIt('default', { html: false, linkify: true, typographer: false });
  md.validateLink = safeLink;
  md.core.ruler.push('task_lists', (state) => taskLists(state.tokens, (type) => new state.Token(type, '', 0)));
  md.core.ruler.push('heading_ids', (state) => headingIds(state.tokens));
  md.core.ruler.push('align_classes', (state) => alignClasses(state.tokens));
  const rules = md.renderer.rules;
  rules.text = (tokens, idx) => markBidi(escapeHtml(tokens[idx]?.content ?? ''));
  rules.code_inline = (tokens, idx) => `<code>${markBidi(escapeHtml(tokens[idx]?.content ?? ''))}</code>`;
  rules.fence = (tokens, idx) => codeBlock(tokens[idx]?.content ?? '', tokens[idx]?.info ?? '');
  rules.code_block = (tokens, idx) => codeBlock(tokens[idx]?.content ?? '', '');
  rules.heading_open = (tokens, idx, opts, _env, self) => {
    const id = tokens[idx]?.attrGet('id') ?? '';
    return `${self.renderToken(tokens, idx, opts)}<a class="anchor" href="#${escapeHtml(id)}" aria-hidden="true">#</a>`;
  };
  rules.link_open = (tokens, idx, opts, _env, self) => {
    const t = tokens[idx];
    const href = t?.attrGet('href') ?? '';
    if (href.startsWith('#')) t?.attrSet('href', `#${ID_PREFIX}${href.slice(1)}`);
    t?.attrSet('rel', 'nofollow noopener noreferrer');
    return self.renderToken(tokens, idx, opts);
  };
  rules.image = (tokens, idx, opts, env, self) => {
    const t = tokens[idx];
    const src = t?.attrGet('src') ?? '';
    const alt = self.renderInlineAsText(t?.children ?? [], opts, env);
    if (options.remoteImages || ownImage(src, options.baseUrl)) {
      t?.attrSet('alt', alt);
      t?.attrSet('loading', 'lazy');
      t?.attrSet('referrerpolicy', 'no-referrer');
      return self.renderToken(tokens, idx, opts);
    }
    // Another server's image is not fetched: a link to it, which the reader may follow.
    const label = escapeHtml(alt === '' ? 'image' : alt);
    return `<a class="remote-image" href="${escapeHtml(src)}" rel="nofollow noopener noreferrer">${label}</a>`;
  };
  return (source) => md.render(source);
}
