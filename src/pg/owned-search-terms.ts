/**
 * LIKE patterns that every paste matching a My pastes search matches (paste/owned-search.ts),
 * on `lower(column collate "C")`: a C-collation lower() changes only A-Z, whatever the
 * database's locale, so the patterns narrow the search without ever dropping a match.
 *
 * The words are lowercased as the match lowercases them, then cut into runs of printable
 * ASCII other than `"` and `\`: such a character is stored as itself in both the title and
 * the text's JSON literal (pg/paste-row.ts), which escapes the others. Only two characters
 * that are not ASCII lowercase to ASCII (checked in test/pg/owned-search.test.ts): U+212A
 * KELVIN SIGN to `k` and U+0130 to `i` and a combining dot, so `k` and `i` match any one
 * character (`_`).
 */
export function likeTerms(text: string): string[] {
  const runs = text.toLowerCase().split(/[^\x20\x21\x23-\x5b\x5d-\x7e]+/);
  return runs.filter((r) => r !== '').map((r) => `%${r.replace(/[%_]/g, (c) => `\\${c}`).replace(/[ik]/g, '_')}%`);
}
