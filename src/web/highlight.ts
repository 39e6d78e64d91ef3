import { grammarOf, libraryLines } from './highlight-library.ts';
import { escape } from './highlight-writer.ts';

/**
 * Syntax highlighting for paste pages, by highlight.js's grammars for every language it
 * knows (highlight-library.ts). Every character is HTML-escaped, and a token that runs
 * across lines is closed at each line's end and reopened on the next, so each returned line
 * is balanced HTML that can be wrapped in its own numbered row.
 */

/**
 * The most token spans one text gets: past them, the rest is escaped plain text. Markup
 * and time grow with the spans, and hostile text (`&a` repeated, as CSS) makes one every
 * few bytes; code people read has a few per line, so this still colours thousands of lines.
 */
export const MAX_SPANS = 20_000;

/**
 * The most characters highlight.js is given: it works on the whole text at once, so this
 * bounds how long one page holds the event loop; the lines after it are escaped plain text.
 */
export const LIBRARY_MAX_CHARS = 16 * 1024;

/** The lines highlighted by highlight.js as far as LIBRARY_MAX_CHARS reaches, the rest plain. */
function libraryHead(lines: string[], grammar: string): string[] {
  let end = 0;
  for (let chars = 0; end < lines.length; end++) {
    chars += (lines[end] ?? '').length + 1;
    if (chars > LIBRARY_MAX_CHARS) break;
  }
  const head = end === 0 ? undefined : libraryLines(lines.slice(0, end).join('\n'), grammar, end, MAX_SPANS);
  if (head === undefined) return lines.map(escape);
  for (let i = end; i < lines.length; i++) head.push(escape(lines[i] ?? ''));
  return head;
}

/**
 * Highlights `code` as `language`: one HTML string per line (split on \n, a trailing \r
 * dropped). 'text' and languages without a grammar come back escaped, with no spans.
 */
export function highlight(code: string, language: string): string[] {
  const lines = code.split('\n').map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l));
  const grammar = grammarOf(language.toLowerCase());
  return grammar === undefined ? lines.map(escape) : libraryHead(lines, grammar);
}
