import { blockCommentAt, extraAt, lineCommentAt, regexEnd, stringAt, stringEnd } from './highlight-code-tokens.ts';
import { OPERATORS, type CodeRules, type Kind, type StringRule } from './highlight-rules.ts';
import type { LineWriter } from './highlight-writer.ts';

/**
 * The lexer for code languages (C-like, scripting, config and CSS), driven by a CodeRules
 * table. Comments, strings and heredocs left open at a line's end are kept in CodeState.
 */

/** A comment or string still open at the end of a line. */
interface Open {
  readonly kind: 'com' | 'str';
  readonly rule: StringRule;
  /** The opener, when comments nest. */
  readonly nest: string | undefined;
  depth: number;
}

/** What the code lexer carries from one line to the next. */
export interface CodeState {
  open: Open | undefined;
  heredoc: { readonly end: string; readonly strip: boolean } | undefined;
  braces: number;
  /** Where the line's next `{`, `;` and `}` are (Infinity: none), for CSS selectors. */
  ahead: { open: number; semi: number; close: number };
}

export const newCodeState = (): CodeState => ({
  open: undefined,
  heredoc: undefined,
  braces: 0,
  ahead: { open: -1, semi: -1, close: -1 },
});

const NUMBER = /(?:0[xX][\da-fA-F_]+|0[bB][01_]+|0[oO][0-7_]+|\d[\d_]*(?:\.\d[\d_]*)?(?:[eE][+-]?\d+)?)[\w%]*/y;
const HEREDOC = /<<([-~]?)[ \t]*(['"]?)([A-Za-z_]\w*)\2/y;
/** Keywords after which the next word is the name being declared. */
const DECLARES = new Set([
  'class',
  'def',
  'fn',
  'func',
  'function',
  'fun',
  'struct',
  'interface',
  'enum',
  'trait',
  'type',
  'module',
  'impl',
  'record',
  'protocol',
  'extension',
]);

/** Lexes one line (or, inside `<script>`, part of one) of a code language. */
export function codeLine(line: string, rules: CodeRules, st: CodeState, out: LineWriter): void {
  const len = line.length;
  if (st.heredoc !== undefined) {
    const body = st.heredoc.strip ? line.replace(/^\t+/, '') : line;
    if (body === st.heredoc.end) st.heredoc = undefined;
    out.to('str', len);
    return;
  }
  const starts = rules.starters;
  st.ahead = { open: -1, semi: -1, close: -1 };
  let i = st.open === undefined ? lineStart(line, rules, out) : 0;
  let heredoc: CodeState['heredoc'];
  let operand = false; // the last token was a value, so a `/` divides
  let regexes = rules.regexLiterals; // cleared once a `/` fails to open one on this line
  let declaring = false;
  // Once the writer has no spans left, the rest of the line is plain text: no need to lex it.
  while (i < len && out.spansLeft > 0) {
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
      const kind =
        rules.stringPrefix?.test(word) === true && stringAt(line, end, rules) !== undefined
          ? 'str'
          : wordKind(word, rules, st, line, end, wasDeclaring);
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
  if (i < len) out.to(undefined, len);
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

function wordKind(
  word: string,
  rules: CodeRules,
  st: CodeState,
  line: string,
  end: number,
  declared: boolean,
): Kind | undefined {
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
function openString(
  line: string,
  i: number,
  rule: StringRule,
  rules: CodeRules,
  st: CodeState,
  out: LineWriter,
): number {
  const end = stringEnd(line, i + rule.open.length, rule);
  if (end < 0) {
    if (rule.multiline) st.open = { kind: 'str', rule, nest: undefined, depth: 1 };
    out.to('str', line.length);
    return line.length;
  }
  out.to(isKey(line, end, rules, st) ? 'attr' : 'str', end);
  return end;
}

/** Continues the comment or string left open by an earlier line (or earlier on this one). */
function resume(line: string, i: number, st: CodeState, out: LineWriter): number {
  const open = st.open;
  if (open === undefined) return i;
  let end = -1;
  if (open.nest === undefined) {
    end = stringEnd(line, i, open.rule);
  } else {
    for (let j = i; j < line.length; ) {
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
