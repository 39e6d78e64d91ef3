import type { Paste } from '../paste/paste.ts';

/** What a code block shows: a paste's text, and how to show it. */
export type Code = Pick<Paste, 'language' | 'highlight'> & { content: string };
import { escapeHtml, html, raw, type SafeHtml } from './html.ts';
import { highlight } from './highlight.ts';

/** The content's lines as escaped HTML: highlighted when the paste asks for it, plain otherwise. */
export function contentLines(p: Code): string[] {
  const lines = p.highlight === 1 ? highlight(p.content, p.language) : p.content.split(/\r?\n/).map(escapeHtml);
  // A final newline ends the last line; it does not start an empty one.
  if (lines.length > 1 && lines.at(-1) === '') lines.pop();
  return lines;
}

/**
 * The code block: one block-level span per line, numbered by a CSS counter so numbers are
 * never part of a selection or a copy. Each line is balanced HTML from the highlighter
 * (or escaped text), so wrapping it in a span cannot break out of the block.
 */
export function codeBlock(id: string, p: Code): SafeHtml {
  const lines = contentLines(p);
  return html`<pre class="code" id="${id}" tabindex="0"><code>${lines.map((l) => html`<span class="l">${raw(l)}</span>`)}</code></pre>`;
}
