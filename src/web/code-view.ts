import type { TextSize } from '../paste/literal.ts';
import type { Paste } from '../paste/paste.ts';
import { highlight } from './highlight.ts';
import { escapeHtml, html, raw, type SafeHtml } from './html.ts';

/**
 * What a code block shows: a paste's text, and how to show it; `lines`, when given, are the
 * text as it is shown (`shownText`) highlighted already (`highlightSteps`).
 */
export type Code = Pick<Paste, 'language' | 'highlight'> & { content: string; lines?: string[] };

/**
 * The most of a paste its page shows (README, Web pages): a megabyte of `&` or of newlines
 * would make a page many times its size and hold the server while writing it. Raw has it
 * all.
 */
export const PAGE_MAX_LINES = 5_000;
export const PAGE_MAX_CHARS = 100_000;

/**
 * Characters that reorder the text around them without being seen: the bidi embeddings,
 * overrides and isolates, and the direction marks. Shown raw, they make code read
 * differently from how it runs ("Trojan Source", CVE-2021-42574).
 */
const BIDI = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;
const BIDI_ALL = new RegExp(BIDI.source, 'g');

/** Whether `text` holds a bidi control (the page then says so above the code). */
export const hasBidiControls = (text: string): boolean => BIDI.test(text);

/**
 * Each bidi control of a line of escaped HTML, wrapped so the page shows it as its code
 * point and its effect ends at once (an isolating span, styled in the stylesheet). The
 * character itself stays, so a copy is the paste's exact text. Tags hold only ASCII, so
 * the controls are all in text.
 */
export const markBidi = (line: string): string =>
  line.replace(
    BIDI_ALL,
    (c) => `<span class="bidi" data-cp="U+${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}">${c}</span>`,
  );

/** The content's lines as escaped HTML: highlighted when the paste asks for it, plain otherwise. */
export function contentLines(p: Code): string[] {
  let lines =
    p.highlight !== 1
      ? p.content.split(/\r?\n/).map(escapeHtml)
      : p.lines !== undefined
        ? [...p.lines]
        : highlight(p.content, p.language);
  // A final newline ends the last line; it does not start an empty one.
  if (lines.length > 1 && lines.at(-1) === '') lines.pop();
  if (hasBidiControls(p.content)) lines = lines.map(markBidi);
  return lines;
}

/**
 * The code block: one block-level span per line, numbered by a CSS counter so numbers are
 * never part of a selection or a copy. Each line is balanced HTML from the highlighter
 * (or escaped text), so wrapping it in a span cannot break out of the block.
 */
export function codeBlock(id: string, p: Code): SafeHtml {
  // Joined in one go: a template per line was a large share of a short paste's page.
  const lines = contentLines(p);
  return html`<pre class="code" id="${id}" tabindex="0"><code><span class="l">${raw(
    lines.join('</span><span class="l">'),
  )}</span></code></pre>`;
}

/** A paste's code block as its page shows it, with what the page says about the text. */
export interface CodeView {
  block: SafeHtml;
  /** Lines in the whole text (a final newline ends the last line, it starts none). */
  lines: number;
  /** Bytes of UTF-8 in the whole text. */
  bytes: number;
  /** Whether the block shows only the text's beginning, it being too long to show whole. */
  cut: boolean;
  /** Lines and UTF-8 bytes the block shows. */
  shownLines: number;
  shownBytes: number;
  /** Whether the shown text holds bidi controls (each is marked in the block). */
  bidi: boolean;
  /** The block is the text rendered as Markdown (markdown-view.ts), not its source. */
  rendered?: true;
}

/**
 * A text too long to show highlighted, shown whole (a one-time paste's only showing) as
 * escaped text: no line numbers, no colours, so its page stays a few times its size and is
 * written in milliseconds. The copy button takes the element's text as it is.
 */
const plainBlock = (id: string, content: string): SafeHtml =>
  html`<pre class="code plain" id="${id}" tabindex="0"><code>${raw(
    hasBidiControls(content) ? markBidi(escapeHtml(content)) : escapeHtml(content),
  )}</code></pre>`;

/**
 * The view of a text: at most PAGE_MAX_LINES lines and PAGE_MAX_CHARS characters of it, in
 * whole lines where it can; all of it when `whole` (a one-time paste's only showing), plain
 * when it is longer than that.
 */
export function codeView(id: string, code: Code, whole = false): CodeView {
  const { content } = code;
  const shownTo = shownEnd(content);
  const fits = shownTo === content.length;
  const end = whole ? content.length : shownTo;
  const shown = end === content.length ? content : content.slice(0, end);
  const bytes = Buffer.byteLength(content);
  const cut = shown.length < content.length;
  return {
    block: fits ? codeBlock(id, code) : whole ? plainBlock(id, content) : codeBlock(id, { ...code, content: shown }),
    lines: countLines(content),
    bytes,
    cut,
    shownLines: countLines(shown),
    shownBytes: cut ? Buffer.byteLength(shown) : bytes,
    bidi: hasBidiControls(shown),
  };
}

/** What a page reads of a long text (`headView`): one character more than it shows at most. */
export const PAGE_HEAD_CHARS = PAGE_MAX_CHARS + 1;

/**
 * The view of a long text of which only `code.content`, its first PAGE_HEAD_CHARS characters,
 * was read, and the whole text's `size` (paste/literal.ts): the page shows the beginning as
 * `codeView` would, without a pass over the whole (README, Web pages).
 */
export function headView(id: string, code: Code, size: TextSize): CodeView {
  const shown = code.content.slice(0, shownEnd(code.content));
  const shownBytes = Buffer.byteLength(shown);
  return {
    block: codeBlock(id, { ...code, content: shown }),
    lines: size.lines,
    bytes: size.bytes,
    cut: shownBytes < size.bytes,
    shownLines: countLines(shown),
    shownBytes,
    bidi: hasBidiControls(shown),
  };
}

function countLines(s: string): number {
  let n = 0;
  for (let i = s.indexOf('\n'); i !== -1; i = s.indexOf('\n', i + 1)) n++;
  return s === '' || s.endsWith('\n') ? n : n + 1;
}

/** The part of `content` a page shows (`codeView`, `headView`). */
export const shownText = (content: string): string => content.slice(0, shownEnd(content));

/** Where the shown part of `content` ends. */
function shownEnd(content: string): number {
  let end = 0;
  for (let n = 0; n < PAGE_MAX_LINES && end < content.length; n++) {
    const nl = content.indexOf('\n', end);
    const next = nl === -1 ? content.length : nl + 1;
    if (next > PAGE_MAX_CHARS) break;
    end = next;
  }
  if (end > 0) return end;
  // The first line alone is too long: cut it, but never between the halves of a surrogate pair.
  const code = content.charCodeAt(PAGE_MAX_CHARS - 1);
  return code >= 0xd800 && code <= 0xdbff ? PAGE_MAX_CHARS - 1 : PAGE_MAX_CHARS;
}
