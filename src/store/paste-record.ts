import { contentOf, type Paste } from '../paste/paste.ts';
import { DamagedRecord, pasteOf } from '../paste/record.ts';

// The store's readers take the record's error from here, beside the file format.
export { DamagedRecord };

/**
 * The hash and owner a torn paste file still shows, so its owner can delete it. Only from
 * the start of a file as `fileText` writes it (fields first); a quote inside a string is
 * always escaped, so `"owner_id":` outside one is the field, and its number must be whole.
 */
function salvage(text: string): { hash: string | null; ownerId: number | null } {
  const head = /^\{"v":1,"hash":"([A-Za-z0-9]{10})",/.exec(text);
  if (head === null) return { hash: null, ownerId: null };
  const owner = /"owner_id":(\d{1,15})[,}]/.exec(text);
  return { hash: head[1] ?? null, ownerId: owner === null ? null : Number(owner[1]) };
}

/**
 * A kept revision's file text: the paste's, led by the size of its text, so a History page
 * learns each revision's time and size from the first few KB of its file (`keptFacts`).
 */
export const keptText = (p: Paste): string => `{"bytes":${Buffer.byteLength(contentOf(p))},${fileText(p).slice(1)}`;

/**
 * The time and text size of revision `hash` from the start of its kept file, or null when
 * that start does not show them (a file kept before sizes led it, or a damaged one).
 */
export function keptFacts(head: string, hash: string): { savedAt: number; bytes: number } | null {
  const m = /^\{"bytes":(\d{1,10}),"v":1,"hash":"([A-Za-z0-9]{10})",/.exec(head);
  if (m === null || m[2] !== hash) return null;
  // Outside strings (whose quotes are escaped), `"updated_at":` is the field itself.
  const at = /"updated_at":(\d{1,16})[,}]/.exec(head);
  return at === null ? null : { savedAt: Number(at[1]), bytes: Number(m[1]) };
}

/**
 * The file's text: the fields, then `content` spliced in as the literal it already is. The
 * `encrypted` flag is written only when set, so other pastes' files are as they always were.
 */
export function fileText(p: Paste): string {
  const { content_json: content, encrypted, ...fields } = p;
  return `${JSON.stringify(fields).slice(0, -1)}${encrypted === 1 ? ',"encrypted":1' : ''},"content":${content}}`;
}

/** A paste from its file's text; a torn or overwritten file is a `DamagedRecord`. */
export function parseFile(text: string): Paste {
  let f: unknown;
  try {
    f = JSON.parse(text);
  } catch {
    // JSON.parse of a string throws SyntaxError only: a torn or overwritten file.
    const { hash, ownerId } = salvage(text);
    throw new DamagedRecord(
      text.length === 0 ? 'the file is empty' : 'the file is not valid JSON (truncated or overwritten?)',
      hash,
      ownerId,
    );
  }
  return pasteOf(f);
}
