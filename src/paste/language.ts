import { LINE_CLUES, TEXT_CLUES } from './language-clues.ts';
import type { Weights } from './language-clues.ts';
import { LANGUAGE_TABLE, type LanguageRow } from './language-table.ts';
import { GRAM_WORDS, gramSet, gramsOf, mayContain } from './language-grams.ts';

/**
 * The languages a paste can be tagged with, and a small heuristic detector for pastes
 * submitted without one. It adds up weighted clues (language-clues.ts: line shapes keyed by
 * a line's first word, and substring-gated patterns over the whole sample) and answers
 * 'text' unless a language scores convincingly, so prose is never dressed up as code.
 */

/**
 * The languages detection may answer, lowercase; 'text' is plain text. Order matters: a tie
 * goes to the earlier one. Every language a paste may be tagged with is in KNOWN_LANGUAGES.
 */
export const LANGUAGES: readonly string[] = Object.freeze([
  'text',
  'javascript',
  'typescript',
  'python',
  'php',
  'ruby',
  'go',
  'rust',
  'java',
  'c',
  'cpp',
  'csharp',
  'bash',
  'sql',
  'html',
  'css',
  'json',
  'yaml',
  'markdown',
  'xml',
  'dockerfile',
  'diff',
  'ini',
  'kotlin',
  'swift',
  'lua',
  'toml',
  'haskell',
  'perl',
  'powershell',
  'makefile',
  'hcl',
  'scala',
  'r',
  'elixir',
  'zig',
]);

/** Every language a paste may be tagged with (language-table.ts), A to Z. */
export const KNOWN_LANGUAGES: readonly string[] = Object.freeze(LANGUAGE_TABLE.map((row) => row[0]));

const KNOWN: ReadonlyMap<string, LanguageRow> = new Map(LANGUAGE_TABLE.map((row) => [row[0], row]));

export function isLanguage(name: string): boolean {
  return KNOWN.has(name);
}

/** Other names people give the languages (file extensions, common spellings), lowercase. */
const ALIASES: ReadonlyMap<string, string> = new Map(
  LANGUAGE_TABLE.flatMap(([name, , aliases]) => aliases.map((a): [string, string] => [a, name])),
);

/** The other names taken, for the API's description. */
export const LANGUAGE_ALIASES: readonly string[] = Object.freeze([...ALIASES.keys()]);

/** The language a (lowercase) name stands for, aliases included; undefined for one we do not know. */
export function languageNamed(name: string): string | undefined {
  return KNOWN.has(name) ? name : ALIASES.get(name);
}

/** A known language's row: its label, aliases and the grammar that highlights it. */
export const languageRow = (name: string): LanguageRow | undefined => KNOWN.get(name);

/** Only the head of a paste is examined: enough to decide, and it bounds the cost. */
const SAMPLE_CHARS = 16 * 1024;
/**
 * Substring clues scan their whole sample, so they get a shorter one: the tokens they look
 * for turn up early in any real paste, and this keeps detection cheap however long it is.
 */
const CLUE_SAMPLE_CHARS = 4 * 1024;
/** Below this the clues are circumstantial (a colon, one stray keyword): say 'text'. */
const MIN_SCORE = 4;

/** Weights as [index in LANGUAGES, points] pairs, so scoring does no lookups by name. */
type Points = readonly (readonly [number, number])[];

/** A line clue as scored: `id` indexes the count of lines it has matched. */
interface IndexedLineClue {
  readonly id: number;
  readonly re: RegExp;
  readonly points: Points;
  readonly max: number;
  readonly last: string | undefined;
}
/** A text clue as scored. */
interface IndexedTextClue {
  readonly has: string;
  readonly re: RegExp | undefined;
  readonly points: Points;
  /** Hashes of the n-grams of `has`, to rule it out before scanning for it. */
  readonly grams: readonly number[];
}

function points(w: Weights): Points {
  return Object.entries(w).map(([lang, n]) => {
    const i = LANGUAGES.indexOf(lang);
    if (i < 0) throw new Error(`language clue names unknown language ${lang}`);
    return [i, n ?? 0] as const;
  });
}

/** Line clues by the head word they need, indexed once so each line tries only its own. */
const byHead = new Map<string, IndexedLineClue[]>();
/** Line clues tried on every line that starts with a word, whatever the word. */
const ANY_WORD: IndexedLineClue[] = [];

for (const [id, { heads, re, weights, max, last }] of LINE_CLUES.entries()) {
  const clue = { id, re, points: points(weights), max, last };
  if (heads === undefined) ANY_WORD.push(clue);
  for (const head of heads?.split(' ') ?? []) {
    const list = byHead.get(head) ?? [];
    list.push(clue);
    byHead.set(head, list);
  }
}

const textClues: readonly IndexedTextClue[] = TEXT_CLUES.map(({ has, re, weights }) => ({
  has,
  re,
  points: points(weights),
  grams: gramsOf(has),
}));

/** Interpreter names in a `#!` line, which settle the question outright. */
const SHEBANGS: readonly (readonly [RegExp, string])[] = [
  [/^(?:ba|z|k|da|a)?sh$/, 'bash'],
  [/^python/, 'python'],
  [/^(?:ts-node|tsx)$/, 'typescript'],
  [/^(?:node|nodejs|deno|bun)$/, 'javascript'],
  [/^ruby/, 'ruby'],
  [/^php/, 'php'],
  [/^lua/, 'lua'],
  [/^perl/, 'perl'],
  [/^Rscript$/, 'r'],
  [/^(?:elixir|iex)$/, 'elixir'],
  [/^pwsh$/, 'powershell'],
  [/^make$/, 'makefile'],
];

/** Lines like these are `key` lines in YAML but belong to Python, C labels and the like. */
const NOT_YAML_KEYS = new Set(['else', 'try', 'finally', 'default', 'public', 'private', 'protected']);
/** Several lines and not one ending in `;` is unlike these languages. */
const NO_SEMICOLONS = points({ java: -2, c: -2, cpp: -2, csharp: -2, php: -2 });

const [YAML, INI, JSON_] = ['yaml', 'ini', 'json'].map((l) => LANGUAGES.indexOf(l)) as [number, number, number];

/** Scratch space, reused by every (synchronous) call instead of allocated per paste. */
const scratch = {
  score: new Float64Array(LANGUAGES.length),
  matched: new Uint8Array(LINE_CLUES.length),
  grams: new Uint32Array(GRAM_WORDS),
};

/** Guesses the language of `content`; 'text' unless the evidence is convincing. */
export function detectLanguage(content: string): string {
  const sample = content.slice(0, SAMPLE_CHARS);
  const body = sample.trimStart();
  if (body === '') return 'text';
  const decided = decisive(body);
  if (decided !== undefined) return decided;

  const score = scratch.score.fill(0);
  scratch.matched.fill(0);
  let lines = 0;
  let semicolonLines = 0;
  let yamlKeys = 0;
  let iniKeys = 0;
  let iniSections = 0;
  // Line by line without splitting the sample into an array of lines first.
  for (let start = 0; start <= sample.length; ) {
    let end = sample.indexOf('\n', start);
    if (end === -1) end = sample.length;
    const l = sample.slice(start, end).trim();
    start = end + 1;
    if (l === '') continue;
    lines++;
    if (l.endsWith(';')) semicolonLines++;
    const word = leadingWord(l);
    const head = word === undefined ? l.charAt(0) : word.toLowerCase();
    const own = byHead.get(head);
    if (own !== undefined) tryClues(own, l, score);
    if (word !== undefined) tryClues(ANY_WORD, l, score);
    // Both patterns need their punctuation; looking for it first spares most lines the test.
    if (word !== undefined && l.includes(':') && isYamlKey(l, head)) yamlKeys++;
    if (word !== undefined && l.includes('=') && /^[\w.-]+[ \t]*=[^=(){}[\];]*$/.test(l)) iniKeys++;
    if (head === '[' && /^\[[^\]]+\]$/.test(l)) iniSections++;
  }
  const head = sample.slice(0, CLUE_SAMPLE_CHARS);
  const grams = gramSet(head, scratch.grams);
  for (const clue of textClues) {
    if (!mayContain(grams, clue.grams)) continue;
    if (clue.re === undefined ? head.includes(clue.has) : clue.re.test(head)) add(score, clue.points);
  }
  // In YAML nearly every line is a key; prose has the odd `Note: ...` line.
  if (yamlKeys * 3 >= lines) score[YAML]! += Math.min(yamlKeys, 6);
  // A bare `x = 1` is as much Python or shell as INI; sections are what make it INI.
  score[INI]! += iniSections > 0 ? 3 + Math.min(iniKeys, 4) : Math.min(iniKeys, 4) / 2;
  if (lines >= 4 && semicolonLines === 0) add(score, NO_SEMICOLONS);
  if (body.startsWith('{') || body.startsWith('[')) score[JSON_]! += 3;
  return best(score);
}

function add(score: Float64Array, p: Points): void {
  for (const [lang, n] of p) score[lang]! += n;
}

/** Scores the clues of `clues` that line `l` matches, each up to its `max` lines. */
function tryClues(clues: readonly IndexedLineClue[], l: string, score: Float64Array): void {
  const matched = scratch.matched;
  for (const clue of clues) {
    if (matched[clue.id]! < clue.max && (clue.last === undefined || l.endsWith(clue.last)) && clue.re.test(l)) {
      matched[clue.id]!++;
      add(score, clue.points);
    }
  }
}

/** Clues strong enough to skip the scoring: a shebang, a prolog, a diff header, valid JSON. */
function decisive(body: string): string | undefined {
  if (body.startsWith('#!')) {
    const words = (body.split('\n', 1)[0] ?? '').slice(2).trim().split(/\s+/);
    let program = (words[0] ?? '').split('/').pop() ?? '';
    if (program === 'env') program = words.slice(1).find((w) => !w.startsWith('-')) ?? '';
    for (const [re, lang] of SHEBANGS) if (re.test(program)) return lang;
  }
  if (body.startsWith('<?php')) return 'php';
  if (body.startsWith('<?xml')) return 'xml';
  if (/^<!doctype html/i.test(body)) return 'html';
  if (body.startsWith('diff --git ')) return 'diff';
  if ((body.startsWith('{') || body.startsWith('[')) && parsesAsJson(body)) return 'json';
  return undefined;
}

function parsesAsJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch (err: unknown) {
    // Invalid (or cut off by the sample limit) is a SyntaxError: leave it to the scoring.
    if (err instanceof SyntaxError) return false;
    throw err;
  }
}

/** The identifier (dashes allowed) a line starts with, if it starts with one. */
function leadingWord(l: string): string | undefined {
  let end = 0;
  for (; end < l.length; end++) {
    const c = l.charCodeAt(end);
    const letter = (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === 95;
    if (!letter && (end === 0 || !((c >= 48 && c <= 57) || c === 45))) break;
  }
  return end === 0 ? undefined : l.slice(0, end);
}

function isYamlKey(l: string, head: string): boolean {
  if (NOT_YAML_KEYS.has(head) || !/^[\w.-]+:(?: |$)/.test(l)) return false;
  // `Q: How long are pastes kept?` is a sentence, not a value.
  if (/^[\w.-]+: (?:\S+ ){3,}\S*[.?!]$/.test(l)) return false;
  const last = l.charAt(l.length - 1);
  return last !== ';' && last !== ',' && last !== '{' && last !== '(';
}

/** The top scorer, ties going to the earlier language in LANGUAGES. */
function best(score: Float64Array): string {
  let winner = 0;
  for (let i = 1; i < score.length; i++) if ((score[i] ?? 0) > (score[winner] ?? 0)) winner = i;
  return (score[winner] ?? 0) >= MIN_SCORE ? (LANGUAGES[winner] ?? 'text') : 'text';
}
