import type { Kind } from './highlight-rules.ts';
import { escapeHtml } from './html.ts';

/**
 * Writes highlighted lines as HTML: every character is escaped, and each token class gets
 * its `tk-*` span.
 */

/** The class of a highlighted run: a rule kind, or a diff line's. */
export type Class = Kind | 'add' | 'del' | 'hunk';

/** `text` with `&`, `<`, `>`, `"` and `'` as entities, safe in content and quoted attributes. */
export function escape(text: string): string {
  // Most tokens need no escaping, and looking first is much cheaper than replace(): for a
  // short token a loop, for a long run escapeHtml, whose regular expression scans faster.
  if (text.length > 16) return escapeHtml(text);
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 38 || c === 60 || c === 62 || c === 34 || c === 39) return escapeHtml(text);
  }
  return text;
}

const OPENERS: Readonly<Record<Class, string>> = {
  kw: '<span class="tk-kw">',
  str: '<span class="tk-str">',
  com: '<span class="tk-com">',
  num: '<span class="tk-num">',
  fn: '<span class="tk-fn">',
  attr: '<span class="tk-attr">',
  op: '<span class="tk-op">',
  add: '<span class="tk-add">',
  del: '<span class="tk-del">',
  hunk: '<span class="tk-hunk">',
};

/**
 * Builds one line of HTML. Lexers report where each token ends rather than its text, so a
 * run of same-class tokens is sliced from the line and escaped once: building strings a
 * character at a time made a megabyte of punctuation spend most of its time in the GC.
 */
export class LineWriter {
  #line = '';
  #parts: string[] = [];
  #class: Class | undefined;
  #start = 0;
  #end = 0;
  /** Added to positions while a nested lexer works on a slice of the line (`<script>`). */
  base = 0;
  /** Spans still to be written: once none are left, the rest is written as plain text. */
  spansLeft: number;

  constructor(spans: number) {
    this.spansLeft = spans;
  }

  begin(line: string): void {
    this.#line = line;
    this.#parts = [];
    this.#class = undefined;
    this.#start = 0;
    this.#end = 0;
  }

  /** Marks the text from the previous mark up to `end` as `cls` (undefined: plain). */
  to(cls: Class | undefined, end: number): void {
    const at = this.base + end;
    if (at <= this.#end) return;
    if (this.spansLeft <= 0) cls = undefined;
    if (cls !== this.#class) {
      this.#flush();
      this.#class = cls;
    }
    this.#end = at;
  }

  finish(): string {
    this.#flush();
    return this.#parts.join('');
  }

  #flush(): void {
    if (this.#end === this.#start) return;
    const text = escape(this.#line.slice(this.#start, this.#end));
    if (this.#class === undefined) this.#parts.push(text);
    else {
      this.#parts.push(OPENERS[this.#class], text, '</span>');
      this.spansLeft--;
    }
    this.#start = this.#end;
  }
}
