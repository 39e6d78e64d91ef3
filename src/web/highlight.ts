import { codeLine, newCodeState } from './highlight-code.ts';
import { diffLine } from './highlight-diff.ts';
import { markupLine, newMarkupState } from './highlight-markup.ts';
import { grammarOf, libraryLines } from './highlight-library.ts';
import { rulesFor } from './highlight-rules.ts';
import type { Rules } from './highlight-rules.ts';
import { LineWriter, escape } from './highlight-writer.ts';

/**
 * Syntax highlighting for paste pages: for the most pasted languages, one single-pass lexer
 * per family (code, markup, diff) driven by the tables in highlight-rules.ts; for every
 * other language highlight.js knows, its grammars (highlight-library.ts). Every character is HTML-escaped, and a
 * token that runs across lines is closed at each line's end and reopened on the next, so
 * each returned line is balanced HTML that can be wrapped in its own numbered row.
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
  const name = language.toLowerCase();
  const rules = rulesFor(name);
  if (rules === undefined) {
    const grammar = grammarOf(name);
    return grammar === undefined ? lines.map(escape) : libraryHead(lines, grammar);
  }
  const lex = lexer(rules);
  const out = new LineWriter(MAX_SPANS);
  return lines.map((line) => {
    if (out.spansLeft <= 0) return escape(line);
    out.begin(line);
    lex(line, out);
    return out.finish();
  });
}

/** A line lexer with its own state, which carries what is left open from line to line. */
function lexer(rules: Rules): (line: string, out: LineWriter) => void {
  if (rules.lexer === 'diff') {
    const st = { oldLeft: 0, newLeft: 0 };
    return (line, out) => diffLine(line, st, out);
  }
  if (rules.lexer === 'markup') {
    const st = newMarkupState();
    return (line, out) => markupLine(line, st, out);
  }
  const st = newCodeState();
  return (line, out) => codeLine(line, rules, st, out);
}
