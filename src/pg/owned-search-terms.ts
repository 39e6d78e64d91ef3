/**
 * LIKE patterns that every paste matching a My pastes search matches (paste/owned-search.ts),
 * on `lower(column collate "C")`: a C-collation lower() changes only A-Z, whatever the
 * database's locale, so the patterns narrow the search without ever dropping a match.
 *
 * The words are lowercased as the match lowercases them, then cut into runs of the characters
 * that are stored as themselves in both the title and the text's JSON literal
 * (pg/paste-row.ts), and that only themselves lowercase to:
 *
 * - printable ASCII other than `"` and `\`, which JSON escapes. Only two characters that are not
 *   ASCII lowercase to ASCII: U+212A KELVIN SIGN to `k`, and U+0130 to `i` and a combining dot.
 *   So `k` and `i` match any one character (`_`).
 * - characters outside ASCII that have no case (CJK, symbols, emoji), except U+0307, the dot
 *   that U+0130 lowercases to. JSON writes them as they are, and lower() leaves them alone.
 *
 * Both facts about Unicode are checked in test/pg/owned-search.test.ts.
 */
export function likeTerms(text: string): string[] {
  return fewest(runsOf(text, kept).map(likePattern), (t) => t);
}

/**
 * The most conditions a search sends PostgreSQL, each on both columns: a word cut into many
 * runs (U+0130 repeated is as many runs of `i`) would otherwise make each row's lower() many times.
 */
export const MOST_TERMS = 8;

/**
 * `terms` once each, and past MOST_TERMS only the longest, in their order. Each is a condition
 * every match meets, so fewer of them still keep every match; the exact match decides.
 */
function fewest<T>(terms: T[], key: (t: T) => string): T[] {
  const once = [...new Map(terms.map((t) => [key(t), t])).values()];
  if (once.length <= MOST_TERMS) return once;
  const longest = new Set([...once].sort((a, b) => key(b).length - key(a).length).slice(0, MOST_TERMS));
  return once.filter((t) => longest.has(t));
}

/** The LIKE pattern for a run of kept characters: wildcards escaped, `i` and `k` any one character. */
function likePattern(run: string): string {
  return `%${run.replace(/[%_]/g, (c) => `\\${c}`).replace(/[ik]/g, '_')}%`;
}

/** The non-empty runs of `text`, lowercased, cut at each character `inRun` refuses. */
function runsOf(text: string, inRun: (ch: string) => boolean): string[] {
  const runs: string[] = [];
  let run = '';
  for (const ch of text.toLowerCase()) {
    if (inRun(ch)) run += ch;
    else {
      runs.push(run);
      run = '';
    }
  }
  runs.push(run);
  return runs.filter((r) => r !== '');
}

/** Whether `ch` (one code point, lowercased) stands for itself in a pattern. */
function kept(ch: string): boolean {
  const cp = ch.codePointAt(0) as number;
  if (cp < 0x80) return cp >= 0x20 && cp < 0x7f && ch !== '"' && ch !== '\\';
  // A lone surrogate is escaped in JSON; a cased letter has others that lowercase to it.
  return (cp < 0xd800 || cp > 0xdfff) && cp !== 0x307 && ch.toUpperCase() === ch && ch.toLowerCase() === ch;
}

/**
 * A condition on a stored column: a LIKE pattern on its C-collation lower() or on it as it is, or a regular expression
 * on it as it is.
 */
export type WalkTerm = { like: string } | { exact: string } | { regex: string };

/**
 * The conditions a broad search's walk checks on each row (pg/owner-lists.ts): stricter than
 * likeTerms where a word has letters with case outside ASCII. likeTerms must leave them out,
 * since a C-collation lower() does not change them; here a run that holds one becomes a
 * regular expression on the column as stored, each letter a bracket of every character that
 * lowercases to it (`ł` is `[łŁ]`, `d` is `[dD]`). Only the walk uses them: the trigram index
 * is on lower(), so the search's first question, to the index, keeps to likeTerms.
 *
 * The runs end where likeTerms' do, but for cased letters outside ASCII and U+0307: at a
 * character the title or the JSON text does not store as itself. U+0307 after `i`, or first,
 * may be U+0130's lowercase, which the expression allows for. A run without a letter is
 * matched on the column as it is, sparing lower()'s copy of it.
 */
export function walkTerms(text: string): WalkTerm[] {
  const terms = runsOf(text, stored).map((r): WalkTerm => {
    const chars = [...r];
    // Without a letter, lower() would change nothing that could match: the column is read as it is.
    if (chars.every(kept)) return /[a-z]/.test(r) ? { like: likePattern(r) } : { exact: likePattern(r) };
    return { regex: expression(chars) };
  });
  return fewest(terms, (t) => JSON.stringify(t));
}

/** Whether `ch` is stored as itself in a title and in the text's JSON literal. */
function stored(ch: string): boolean {
  const cp = ch.codePointAt(0) as number;
  if (cp < 0x80) return cp >= 0x20 && cp < 0x7f && ch !== '"' && ch !== '\\';
  return cp < 0xd800 || cp > 0xdfff;
}

const DOT = '\u0307';
const CAPITAL_I_DOT = '\u0130';

/**
 * A regular expression for every stored text whose lowercase holds `chars` (a run, lowercased).
 * U+0130 lowercases to `i` and U+0307, so that pair is also U+0130, and so is a U+0307 that
 * opens the run (the words may begin with it, after U+0130's `i`); any other is one as stored.
 */
function expression(chars: string[]): string {
  let out = '';
  for (let k = 0; k < chars.length; k++) {
    const ch = chars[k] as string;
    if (ch === 'i' && chars[k + 1] === DOT) {
      out += `(?:[iI]${DOT}|${CAPITAL_I_DOT})`;
      k++;
    } else if (ch === DOT && k === 0) out += `(?:${DOT}|${CAPITAL_I_DOT})`;
    else out += bracket(ch);
  }
  return out;
}

/** A regular expression (PostgreSQL's advanced flavour) for every character that lowercases to `ch`. */
function bracket(ch: string): string {
  const all = [ch, ...(uppers().get(ch) ?? [])];
  if (all.length > 1) return `[${all.join('')}]`;
  // Alone: a letter or digit stands for itself, and any other ASCII character escaped does.
  return /[\x00-\x7f]/.test(ch) && !/[a-z0-9]/i.test(ch) ? `\\${ch}` : ch;
}

let upperTable: Map<string, string[]> | undefined;

/**
 * Every character, by the one character it lowercases to when it is not itself. U+0130
 * lowercases to two (`i` and U+0307); it goes with `i`. A final capital sigma lowercases to
 * `ς` and any other to `σ`, so both take `Σ`. No code point above U+1FFFF has a lowercase
 * of its own (test/pg/owned-search.test.ts checks it), so the table stops there.
 */
function uppers(): Map<string, string[]> {
  if (upperTable !== undefined) return upperTable;
  const table = new Map<string, string[]>();
  const add = (lower: string, ch: string) => table.set(lower, [...(table.get(lower) ?? []), ch]);
  for (let cp = 0; cp <= 0x1ffff; cp++) {
    if (cp >= 0xd800 && cp <= 0xdfff) continue;
    const ch = String.fromCodePoint(cp);
    const lower = ch.toLowerCase();
    if (lower === ch) continue;
    add([...lower][0] as string, ch);
  }
  add('\u03C2', '\u03A3');
  upperTable = table;
  return table;
}
