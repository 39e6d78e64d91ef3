import { grammarOf, librarySlice } from './highlight-library.ts';
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

/**
 * The most characters `highlightSteps` gives highlight.js at once: the head is highlighted a
 * slice at a time where nothing is left open between them, so other work can run between.
 */
export const LIBRARY_SLICE_CHARS = 4 * 1024;

/** The line after those from `from` that fill `chars` characters (at least one line), up to `end`. */
function linesEnd(lines: readonly string[], from: number, end: number, chars: number): number {
  let to = from;
  for (let n = 0; to < end; to++) {
    n += (lines[to] ?? '').length + 1;
    if (n > chars && to > from) break;
  }
  return to;
}

/**
 * The lines highlighted by highlight.js as far as LIBRARY_MAX_CHARS reaches, the rest plain,
 * pausing (`yield`) after each slice. A slice that ends inside a token (a comment, a string)
 * is highlighted again with the next one, from the last point where nothing was open.
 */
function* libraryHead(lines: string[], grammar: string, sliceChars: number): Generator<void, string[]> {
  const end = linesEnd(lines, 0, lines.length, LIBRARY_MAX_CHARS);
  const full = (lines[0] ?? '').length + 1 > LIBRARY_MAX_CHARS ? 0 : end;
  const out: string[] = [];
  let spans = MAX_SPANS;
  for (let from = 0, to = from; from < full; ) {
    to = linesEnd(lines, to, full, sliceChars);
    const slice = librarySlice(lines.slice(from, to).join('\n'), grammar, to - from, spans);
    if (slice === undefined) return lines.map(escape);
    if (slice.closed || to === full) {
      for (const line of slice.lines) out.push(line);
      spans = slice.spansLeft;
      from = to;
    }
    if (from < full) yield;
  }
  for (let i = out.length; i < lines.length; i++) out.push(escape(lines[i] ?? ''));
  return out;
}

/** The lines of `code`, split on \n with a trailing \r dropped. */
const splitLines = (code: string): string[] => code.split('\n').map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l));

/**
 * `highlight`'s work in steps, pausing between slices of LIBRARY_SLICE_CHARS: a caller that
 * gives the event loop a turn at each pause holds it for one slice at a time.
 */
export function* highlightSteps(
  code: string,
  language: string,
  sliceChars = LIBRARY_SLICE_CHARS,
): Generator<void, string[]> {
  const lines = splitLines(code);
  const grammar = grammarOf(language.toLowerCase());
  return grammar === undefined ? lines.map(escape) : yield* libraryHead(lines, grammar, sliceChars);
}

/**
 * Highlights `code` as `language`: one HTML string per line (split on \n, a trailing \r
 * dropped). 'text' and languages without a grammar come back escaped, with no spans.
 */
export function highlight(code: string, language: string): string[] {
  // In one go: a slice ending inside a token would be highlighted again for nothing.
  const run = highlightSteps(code, language, LIBRARY_MAX_CHARS);
  for (;;) {
    const step = run.next();
    if (step.done === true) return step.value;
  }
}
