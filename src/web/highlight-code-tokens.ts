import type { CodeRules, Extra, StringRule } from './highlight-rules.ts';

/**
 * Where the code lexer's tokens start and end: whether a comment, string or extra rule opens
 * at a position, and where a string or regular expression literal closes. Pure over the line
 * and the rules; what is left open between lines is the lexer's state (highlight-code.ts).
 */

/** The [open, close] pair of the block comment opening at `i`, if one does. */
export function blockCommentAt(line: string, i: number, rules: CodeRules): readonly [string, string] | undefined {
  for (const pair of rules.blockComments) if (line.startsWith(pair[0], i)) return pair;
  return undefined;
}

/** Whether a line comment starts at `i` (after white space, where the rules ask for it). */
export function lineCommentAt(line: string, i: number, rules: CodeRules): boolean {
  if (rules.commentAfterSpace && i > 0 && !/\s/.test(line.charAt(i - 1))) return false;
  for (const marker of rules.lineComments) if (line.startsWith(marker, i)) return true;
  return false;
}

/** The string rule whose opener is at `i`, if any. */
export function stringAt(line: string, i: number, rules: CodeRules): StringRule | undefined {
  for (const rule of rules.strings) if (line.startsWith(rule.open, i)) return rule;
  return undefined;
}

/** The extra rule matching at `i`; its sticky regex's lastIndex is then the token's end. */
export function extraAt(line: string, i: number, rules: CodeRules): Extra | undefined {
  const c = line.charAt(i);
  for (const extra of rules.extras) {
    if (!extra.first.includes(c)) continue;
    extra.re.lastIndex = i;
    if (extra.re.test(line)) return extra;
  }
  return undefined;
}

/** The index just past the string's closing delimiter, or -1 if the line ends first. */
export function stringEnd(line: string, from: number, rule: StringRule): number {
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

/** The index just past a regular expression literal starting at `i`, or -1 if it isn't one. */
export function regexEnd(line: string, i: number): number {
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
