import { codeLine, newCodeState } from './highlight-code.ts';
import type { CodeState } from './highlight-code.ts';
import { rulesFor } from './highlight-rules.ts';
import type { CodeRules } from './highlight-rules.ts';
import type { LineWriter } from './highlight-writer.ts';

/** The lexer for HTML and XML; `<script>` and `<style>` bodies go to the code lexer. */

/** What the markup lexer carries from one line to the next. */
export interface MarkupState {
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

export const newMarkupState = (): MarkupState => ({ mode: 'text', quote: '', tag: '', value: false, raw: undefined });

const TAG_OPEN = /<(\/?|[!?])([A-Za-z][\w:.-]*)/y;
const ENTITY = /&(?:#\d+|#x[\da-fA-F]+|\w+);/y;
const ATTR_NAME = /[^\s=>"'/?]+/y;
const UNQUOTED = /[^\s>"'=<`]+/y;
const RAW: Readonly<Record<string, string>> = { script: 'javascript', style: 'css' };

/** Lexes one line of HTML or XML, updating `st` with whatever is left open. */
export function markupLine(line: string, st: MarkupState, out: LineWriter): void {
  let lower: string | undefined;
  for (let i = 0; i < line.length; ) {
    // Once the writer has no spans left, the rest of the line is plain text.
    if (out.spansLeft <= 0) {
      out.to(undefined, line.length);
      return;
    }
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
  for (const [open, mode] of [
    ['<!--', 'comment'],
    ['<![CDATA[', 'cdata'],
  ] as const) {
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
