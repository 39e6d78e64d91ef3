import { rulesFor } from './highlight-rules.ts';
import type { CodeRules, Extra, Kind, Rules, StringRule } from './highlight-rules.ts';

/**
 * Syntax highlighting for paste pages: one single-pass lexer per family (code, markup,
 * diff) driven by the tables in highlight-rules.ts. Every character is HTML-escaped, and a
 * token that runs across lines is closed at each line's end and reopened on the next, so
 * each returned line is balanced HTML that can be wrapped in its own numbered row.
 */

type Class = Kind | 'add' | 'del' | 'hunk';

const ESCAPES: Readonly<Record<string, string>> = {
  '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;',
};

function escape(text: string): string {
  // Most tokens need no escaping; looking first is much cheaper than replace().
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 38 || c === 60 || c === 62 || c === 34 || c === 39) {
      return text.replace(/[&<>"']/g, (ch) => ESCAPES[ch] ?? ch);
    }
  }
  return text;
}

const OPENERS: Readonly<Record<Class, string>> = {
  kw: '<span class="tk-kw">', str: '<span class="tk-str">', com: '<span class="tk-com">',
  num: '<span class="tk-num">', fn: '<span class="tk-fn">', attr: '<span class="tk-attr">',
  op: '<span class="tk-op">', add: '<span class="tk-add">', del: '<span class="tk-del">',
  hunk: '<span class="tk-hunk">',
};

/**
 * Builds one line of HTML. Lexers report where each token ends rather than its text, so a
 * run of same-class tokens is sliced from the line and escaped once: building strings a
 * character at a time made a megabyte of punctuation spend most of its time in the GC.
 */
class LineWriter {
  #line = '';
  #parts: string[] = [];
  #class: Class | undefined;
  #start = 0;
  #end = 0;
  /** Added to positions while a nested lexer works on a slice of the line (`<script>`). */
  base = 0;

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
    else this.#parts.push(OPENERS[this.#class], text, '</span>');
    this.#start = this.#end;
  }
}

/**
 * Highlights `code` as `language`: one HTML string per line (split on \n, a trailing \r
 * dropped). 'text' and languages without rules come back escaped, with no spans.
 */
export function highlight(code: string, language: string): string[] {
  const lines = code.split('\n').map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l));
  const rules = rulesFor(language.toLowerCase());
  if (rules === undefined) return lines.map(escape);
  const lex = lexer(rules);
  const out = new LineWriter();
  return lines.map((line) => {
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

/** A comment or string still open at the end of a line. */
interface Open {
  readonly kind: 'com' | 'str';
  readonly rule: StringRule;
  /** The opener, when comments nest. */
  readonly nest: string | undefined;
  depth: number;
}

interface CodeState {
  open: Open | undefined;
  heredoc: { readonly end: string; readonly strip: boolean } | undefined;
  braces: number;
  /** Where the line's next `{`, `;` and `}` are (Infinity: none), for CSS selectors. */
  ahead: { open: number; semi: number; close: number };
}

const newCodeState = (): CodeState =>
  ({ open: undefined, heredoc: undefined, braces: 0, ahead: { open: -1, semi: -1, close: -1 } });

const NUMBER = /(?:0[xX][\da-fA-F_]+|0[bB][01_]+|0[oO][0-7_]+|\d[\d_]*(?:\.\d[\d_]*)?(?:[eE][+-]?\d+)?)[\w%]*/y;
const HEREDOC = /<<([-~]?)[ \t]*(['"]?)([A-Za-z_]\w*)\2/y;
const OPERATORS = '+-*/%=<>!&|^~?:';
/** Keywords after which the next word is the name being declared. */
const DECLARES = new Set(['class', 'def', 'fn', 'func', 'function', 'fun', 'struct', 'interface',
  'enum', 'trait', 'type', 'module', 'impl', 'record', 'protocol', 'extension']);

/** ASCII codes that may start a token in a language; runs of the rest are emitted at once. */
const starters = new WeakMap<CodeRules, Uint8Array>();

function startersOf(rules: CodeRules): Uint8Array {
  let table = starters.get(rules);
  if (table !== undefined) return table;
  const t = new Uint8Array(128);
  const mark = (chars: string): void => {
    for (let k = 0; k < chars.length; k++) t[chars.charCodeAt(k) & 127] = 1;
  };
  mark(`ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_$ \t{}<${OPERATORS}`);
  for (const m of rules.lineComments) mark(m.charAt(0));
  for (const [open] of rules.blockComments) mark(open.charAt(0));
  for (const s of rules.strings) mark(s.open.charAt(0));
  for (const e of rules.extras) mark(e.first);
  table = t;
  starters.set(rules, table);
  return table;
}

/** Lexes one line (or, inside `<script>`, part of one) of a code language. */
function codeLine(line: string, rules: CodeRules, st: CodeState, out: LineWriter): void {
  const len = line.length;
  if (st.heredoc !== undefined) {
    const body = st.heredoc.strip ? line.replace(/^\t+/, '') : line;
    if (body === st.heredoc.end) st.heredoc = undefined;
    out.to('str', len);
    return;
  }
  const starts = startersOf(rules);
  st.ahead = { open: -1, semi: -1, close: -1 };
  let i = st.open === undefined ? lineStart(line, rules, out) : 0;
  let heredoc: CodeState['heredoc'];
  let operand = false; // the last token was a value, so a `/` divides
  let regexes = rules.regexLiterals; // cleared once a `/` fails to open one on this line
  let declaring = false;
  while (i < len) {
    if (st.open !== undefined) {
      i = resume(line, i, st, out);
      operand = true;
      continue;
    }
    const code = line.charCodeAt(i);
    if (code >= 128 || starts[code] === 0 || code === 32 || code === 9) {
      const space = code === 32 || code === 9;
      let j = i + 1;
      for (; j < len; j++) {
        const k = line.charCodeAt(j);
        if (space ? k !== 32 && k !== 9 : k < 128 && starts[k] === 1) break;
      }
      out.to(undefined, j);
      if (!space) operand = ')]'.includes(line.charAt(j - 1));
      declaring &&= space;
      i = j;
      continue;
    }
    const c = line.charAt(i);
    const wasDeclaring = declaring;
    declaring = false;
    const block = blockCommentAt(line, i, rules);
    if (block !== undefined) {
      const rule = { open: block[0], close: block[1], escape: false, multiline: true };
      st.open = { kind: 'com', rule, nest: rules.nestedComments ? block[0] : undefined, depth: 1 };
      i += block[0].length;
      out.to('com', i);
      continue;
    }
    if (lineCommentAt(line, i, rules)) {
      out.to('com', len);
      break;
    }
    const string = stringAt(line, i, rules);
    if (string !== undefined) {
      i = openString(line, i, string, rules, st, out);
      operand = true;
      continue;
    }
    if (rules.heredocs && c === '<') {
      HEREDOC.lastIndex = i;
      const m = HEREDOC.exec(line);
      if (m !== null) {
        heredoc = { end: m[3] ?? '', strip: m[1] !== '' };
        i += m[0].length;
        out.to('str', i);
        continue;
      }
    }
    const extra = extraAt(line, i, rules);
    if (extra !== undefined) {
      i = extra.re.lastIndex;
      out.to(inBlock(line, i, rules, st) ? (extra.braced ?? extra.kind) : extra.kind, i);
      operand = true;
      continue;
    }
    if (c === '/' && regexes && !operand) {
      const end = regexEnd(line, i);
      if (end > 0) {
        out.to('str', end);
        i = end;
        operand = true;
        continue;
      }
      regexes = false;
    }
    rules.word.lastIndex = i;
    if (rules.word.test(line)) {
      const end = rules.word.lastIndex;
      const word = line.slice(i, end);
      const kind = rules.stringPrefix?.test(word) === true && stringAt(line, end, rules) !== undefined
        ? 'str' : wordKind(word, rules, st, line, end, wasDeclaring);
      out.to(kind, end);
      declaring = kind === 'kw' && DECLARES.has(word);
      operand = kind !== 'kw';
      i = end;
      continue;
    }
    if (rules.numbers && code >= 48 && code <= 57) {
      NUMBER.lastIndex = i;
      i = NUMBER.test(line) ? NUMBER.lastIndex : i + 1;
      out.to('num', i);
      operand = true;
      continue;
    }
    if (c === '{') st.braces++;
    else if (c === '}') st.braces = Math.max(0, st.braces - 1);
    out.to(rules.operators && OPERATORS.includes(c) ? 'op' : undefined, ++i);
    operand = c === '}';
  }
  if (heredoc !== undefined) st.heredoc = heredoc;
}

/** Applies the first matching start-of-line rule; returns where lexing goes on. */
function lineStart(line: string, rules: CodeRules, out: LineWriter): number {
  for (const [re, kind] of rules.lineStart) {
    const m = re.exec(line);
    if (m === null) continue;
    out.to(undefined, (m[1] ?? '').length);
    out.to(kind, m[0].length);
    return m[0].length;
  }
  return 0;
}

function blockCommentAt(line: string, i: number, rules: CodeRules): readonly [string, string] | undefined {
  for (const pair of rules.blockComments) if (line.startsWith(pair[0], i)) return pair;
  return undefined;
}

function lineCommentAt(line: string, i: number, rules: CodeRules): boolean {
  if (rules.commentAfterSpace && i > 0 && !/\s/.test(line.charAt(i - 1))) return false;
  for (const marker of rules.lineComments) if (line.startsWith(marker, i)) return true;
  return false;
}

function stringAt(line: string, i: number, rules: CodeRules): StringRule | undefined {
  for (const rule of rules.strings) if (line.startsWith(rule.open, i)) return rule;
  return undefined;
}

/** The extra rule matching at `i`; its sticky regex's lastIndex is then the token's end. */
function extraAt(line: string, i: number, rules: CodeRules): Extra | undefined {
  const c = line.charAt(i);
  for (const extra of rules.extras) {
    if (!extra.first.includes(c)) continue;
    extra.re.lastIndex = i;
    if (extra.re.test(line)) return extra;
  }
  return undefined;
}

function wordKind(word: string, rules: CodeRules, st: CodeState, line: string, end: number,
  declared: boolean): Kind | undefined {
  if (isKey(line, end, rules, st)) return 'attr';
  // After a `.` it is a member (`app.get(...)`), whatever it is called.
  const member = line.charAt(end - word.length - 1) === '.';
  if (!member && rules.keywords.has(rules.caseInsensitive ? word.toLowerCase() : word)) return 'kw';
  if (rules.builtins.has(word) || declared) return 'fn';
  if (rules.calls && line.charAt(end) === '(') return 'fn';
  return rules.selectors && !inBlock(line, end, rules, st) ? 'fn' : undefined;
}

/**
 * Whether `i` is among a CSS block's declarations rather than in a selector: inside braces,
 * and no `{` comes before the next `;` or `}` (so `a:hover {` in `@media` is a selector).
 * The positions ahead are found once and reused, which keeps a long line linear.
 */
function inBlock(line: string, i: number, rules: CodeRules, st: CodeState): boolean {
  if (st.braces === 0) return false;
  if (!rules.selectors) return true;
  const a = st.ahead;
  const next = (at: number, c: string): number => {
    if (at >= i) return at;
    const found = line.indexOf(c, i);
    return found < 0 ? Infinity : found;
  };
  a.open = next(a.open, '{');
  a.semi = next(a.semi, ';');
  a.close = next(a.close, '}');
  return a.open > Math.min(a.semi, a.close);
}

/** Whether the token ending at `end` is followed by the `:` that makes it a key. */
function isKey(line: string, end: number, rules: CodeRules, st: CodeState): boolean {
  if (rules.keys === 'never') return false;
  let colon = end;
  while (line.charAt(colon) === ' ' || line.charAt(colon) === '\t') colon++;
  if (line.charAt(colon) !== ':' || line.charAt(colon + 1) === ':') return false;
  if (rules.keys === 'braced') return inBlock(line, end, rules, st);
  if (rules.keys === 'spaced') return colon + 1 === line.length || /\s/.test(line.charAt(colon + 1));
  return true;
}

/** Emits a string starting at `i`; one left open at the end of the line is kept in `st`. */
function openString(line: string, i: number, rule: StringRule, rules: CodeRules, st: CodeState,
  out: LineWriter): number {
  const end = stringEnd(line, i + rule.open.length, rule);
  if (end < 0) {
    if (rule.multiline) st.open = { kind: 'str', rule, nest: undefined, depth: 1 };
    out.to('str', line.length);
    return line.length;
  }
  out.to(isKey(line, end, rules, st) ? 'attr' : 'str', end);
  return end;
}

/** The index just past the string's closing delimiter, or -1 if the line ends first. */
function stringEnd(line: string, from: number, rule: StringRule): number {
  if (!rule.escape) {
    const at = line.indexOf(rule.close, from);
    return at < 0 ? -1 : at + rule.close.length;
  }
  for (let j = from; j < line.length; j++) {
    if (line.charAt(j) === '\\') j++;
    else if (line.startsWith(rule.close, j)) return j + rule.close.length;
  }
  return -1;
}

/** Continues the comment or string left open by an earlier line (or earlier on this one). */
function resume(line: string, i: number, st: CodeState, out: LineWriter): number {
  const open = st.open;
  if (open === undefined) return i;
  let end = -1;
  if (open.nest === undefined) {
    end = stringEnd(line, i, open.rule);
  } else {
    for (let j = i; j < line.length;) {
      if (line.startsWith(open.rule.close, j)) {
        j += open.rule.close.length;
        if (--open.depth === 0) {
          end = j;
          break;
        }
      } else if (line.startsWith(open.nest, j)) {
        j += open.nest.length;
        open.depth++;
      } else {
        j++;
      }
    }
  }
  if (end >= 0) st.open = undefined;
  end = end < 0 ? line.length : end;
  out.to(open.kind, end);
  return end;
}

/** The index just past a regular expression literal starting at `i`, or -1 if it isn't one. */
function regexEnd(line: string, i: number): number {
  let inClass = false;
  for (let j = i + 1; j < line.length; j++) {
    const c = line.charAt(j);
    if (c === '\\') j++;
    else if (c === '[') inClass = true;
    else if (c === ']') inClass = false;
    else if (c === '/' && !inClass) {
      let k = j + 1;
      while (/[a-z]/.test(line.charAt(k))) k++;
      return k;
    }
  }
  return -1;
}

interface MarkupState {
  mode: 'text' | 'tag' | 'value' | 'comment' | 'cdata';
  /** The quote that closes an attribute value running across lines. */
  quote: string;
  /** The open tag's lowercase name ('' for closing tags): `<script>` and `<style>` hold code. */
  tag: string;
  /** The next token is an attribute value (it follows `=`). */
  value: boolean;
  /** Inside `<script>` or `<style>`: lexed as code until the closing tag. */
  raw: { readonly end: string; readonly rules: CodeRules; readonly state: CodeState } | undefined;
}

const newMarkupState = (): MarkupState =>
  ({ mode: 'text', quote: '', tag: '', value: false, raw: undefined });

const TAG_OPEN = /<(\/?|[!?])([A-Za-z][\w:.-]*)/y;
const ENTITY = /&(?:#\d+|#x[\da-fA-F]+|\w+);/y;
const ATTR_NAME = /[^\s=>"'/?]+/y;
const UNQUOTED = /[^\s>"'=<`]+/y;
const RAW: Readonly<Record<string, string>> = { script: 'javascript', style: 'css' };

/** Lexes one line of HTML or XML, updating `st` with whatever is left open. */
function markupLine(line: string, st: MarkupState, out: LineWriter): void {
  let lower: string | undefined;
  for (let i = 0; i < line.length;) {
    if (st.raw !== undefined) {
      lower ??= line.toLowerCase();
      const at = lower.indexOf(st.raw.end, i);
      out.base = i;
      codeLine(line.slice(i, at < 0 ? line.length : at), st.raw.rules, st.raw.state, out);
      out.base = 0;
      if (at < 0) return;
      st.raw = undefined;
      i = at;
    }
    if (st.mode === 'comment' || st.mode === 'cdata' || st.mode === 'value') {
      const close = st.mode === 'comment' ? '-->' : st.mode === 'cdata' ? ']]>' : st.quote;
      const at = line.indexOf(close, i);
      i = at < 0 ? line.length : at + close.length;
      out.to(st.mode === 'comment' ? 'com' : 'str', i);
      if (at >= 0) st.mode = st.mode === 'value' ? 'tag' : 'text';
    } else {
      i = st.mode === 'tag' ? tagToken(line, i, st, out) : textToken(line, i, st, out);
    }
  }
}

function textToken(line: string, i: number, st: MarkupState, out: LineWriter): number {
  let j = i;
  while (j < line.length && line.charAt(j) !== '<' && line.charAt(j) !== '&') j++;
  if (j > i) {
    out.to(undefined, j);
    return j;
  }
  for (const [open, mode] of [['<!--', 'comment'], ['<![CDATA[', 'cdata']] as const) {
    if (!line.startsWith(open, i)) continue;
    st.mode = mode;
    out.to(mode === 'comment' ? 'com' : 'str', i + open.length);
    return i + open.length;
  }
  const re = line.charAt(i) === '<' ? TAG_OPEN : ENTITY;
  re.lastIndex = i;
  const m = re.exec(line);
  if (m === null) {
    out.to(undefined, i + 1);
    return i + 1;
  }
  if (re === ENTITY) {
    out.to('num', re.lastIndex);
    return re.lastIndex;
  }
  const [, mark = '', name = ''] = m;
  out.to('op', i + 1 + mark.length);
  out.to(mark === '!' || mark === '?' ? 'kw' : 'fn', re.lastIndex);
  st.mode = 'tag';
  st.tag = mark === '' ? name.toLowerCase() : '';
  st.value = false;
  return re.lastIndex;
}

function tagToken(line: string, i: number, st: MarkupState, out: LineWriter): number {
  const c = line.charAt(i);
  if (c === ' ' || c === '\t') {
    out.to(undefined, i + 1);
    return i + 1;
  }
  const close = ['/>', '?>', '>'].find((s) => line.startsWith(s, i));
  if (close !== undefined) {
    out.to('op', i + close.length);
    st.mode = 'text';
    const language = close === '>' ? RAW[st.tag] : undefined;
    const rules = language === undefined ? undefined : rulesFor(language);
    if (rules?.lexer === 'code') st.raw = { end: `</${st.tag}`, rules, state: newCodeState() };
    return i + close.length;
  }
  const value = st.value;
  st.value = c === '=';
  if (c === '"' || c === "'") {
    st.mode = 'value';
    st.quote = c;
    out.to('str', i + 1);
    return i + 1;
  }
  if (c === '=') {
    out.to('op', i + 1);
    return i + 1;
  }
  const re = value ? UNQUOTED : ATTR_NAME;
  re.lastIndex = i;
  const end = re.test(line) ? re.lastIndex : i + 1;
  out.to(value ? 'str' : end === i + 1 && !/\w/.test(c) ? 'op' : 'attr', end);
  return end;
}

const HUNK = /^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@/;
const DIFF_META = /^(?:\\ |diff |index |--- |\+\+\+ |new file mode|deleted file mode|old mode|new mode|similarity index|rename from|rename to|Binary files|Index: |={3,}$)/;

/**
 * Classes a whole diff line. Inside a hunk the line counts in its `@@` header say where it
 * ends, so a removed line that starts `-- ` is not mistaken for a `---` file header.
 */
function diffLine(line: string, st: { oldLeft: number; newLeft: number }, out: LineWriter): void {
  const hunk = HUNK.exec(line);
  const first = line.charAt(0);
  let cls: Class | undefined;
  if (hunk !== null) {
    st.oldLeft = Number(hunk[1] ?? 1);
    st.newLeft = Number(hunk[2] ?? 1);
    cls = 'hunk';
  } else if (st.oldLeft > 0 || st.newLeft > 0) {
    if (first !== '+' && first !== '\\') st.oldLeft--;
    if (first !== '-' && first !== '\\') st.newLeft--;
    cls = first === '+' ? 'add' : first === '-' ? 'del' : first === '\\' ? 'com' : undefined;
  } else {
    cls = DIFF_META.test(line) ? 'com' : first === '+' ? 'add' : first === '-' ? 'del' : undefined;
  }
  out.to(cls, line.length);
}
