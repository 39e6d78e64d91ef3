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
  const runs: string[] = [];
  let run = '';
  for (const ch of text.toLowerCase()) {
    if (kept(ch)) run += ch;
    else {
      runs.push(run);
      run = '';
    }
  }
  runs.push(run);
  return runs.filter((r) => r !== '').map((r) => `%${r.replace(/[%_]/g, (c) => `\\${c}`).replace(/[ik]/g, '_')}%`);
}

/** Whether `ch` (one code point, lowercased) stands for itself in a pattern. */
function kept(ch: string): boolean {
  const cp = ch.codePointAt(0) as number;
  if (cp < 0x80) return cp >= 0x20 && cp < 0x7f && ch !== '"' && ch !== '\\';
  // A lone surrogate is escaped in JSON; a cased letter has others that lowercase to it.
  return (cp < 0xd800 || cp > 0xdfff) && cp !== 0x307 && ch.toUpperCase() === ch && ch.toLowerCase() === ch;
}
