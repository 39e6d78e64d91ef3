import type { Sql } from 'postgres';
import { literalHead, type TextSize } from '../paste/literal.ts';
import { encodeContent, type Paste } from '../paste/paste.ts';
import type { PasteHead } from '../paste/repository.ts';
import { pasteColumns, pasteOf } from './paste-row.ts';

/**
 * A stored text (JSON literal, in bytes) up to this size is read whole for a page, as any
 * read does; of a longer one, the page reads the beginning (README, Web pages): receiving
 * and decoding 64 MiB held the event loop for a large part of a second.
 */
export const WHOLE_TEXT_BYTES = 1_048_576;

/** The escapes the count looks for, as the literal writes them. */
const BACKSLASH = '\\';
const PAIR = BACKSLASH.repeat(2);
const NEWLINE = `${BACKSLASH}n`;
const UNIT = `${BACKSLASH}u`;
const LAST_NEWLINE = `${NEWLINE}"`;

/** Whole texts' sizes remembered, by paste version: counting one reads all of it, on the database. */
const SIZES_KEPT = 256;

/**
 * Reads the beginning of long pastes' texts (PasteRepository.head), and counts the whole on
 * the database, once per version: in the literal, with each escaped backslash taken out
 * first, every other backslash starts an escape, `\n` one of a newline, and `\u` one of a
 * control character (all JSON.stringify writes that way), each one byte of the text.
 */
export class PgPasteHeads {
  readonly #sizes = new Map<string, TextSize>();

  constructor(private readonly sql: Sql) {}

  /**
   * The paste `hash` for a page of at most `chars` characters of its text; null when there is
   * none. `same` answers the object read before for an unchanged version.
   */
  async read(hash: string, chars: number, same: (p: Paste) => Paste): Promise<PasteHead | null> {
    const sql = this.sql;
    const content = sql`case when octet_length(content_json) <= ${WHOLE_TEXT_BYTES}::int then content_json
      else substr(content_json, 1, ${1 + 6 * chars}::int) end`;
    const [row] = await sql`select ${pasteColumns(sql, content)},
      octet_length(content_json) > ${WHOLE_TEXT_BYTES}::int as cut from pastes where hash = ${hash}`;
    if (row === undefined) return null;
    const paste = pasteOf(row);
    if (row['cut'] !== true) return { paste: same(paste) };
    const key = `${hash}:${paste.updated_at}`;
    const size = this.#sizes.get(key) ?? (await this.#count(hash, paste.updated_at, key));
    // The same object for the same version (pg/paste-identity.ts), as the page's caches need.
    return {
      paste: same({ ...paste, content_json: encodeContent(literalHead(paste.content_json, chars, false)) }),
      size,
    };
  }

  /** The size of paste `hash`'s text, remembered when it is still the version of `updatedAt`. */
  async #count(hash: string, updatedAt: number, key: string): Promise<TextSize> {
    // Each text function would take the value out of storage again: once, behind a fence (offset 0).
    const [r] = await this.sql`select octet_length(a.x)::float8 as literal,
        ((octet_length(a.x) - octet_length(b.y)) / 2)::float8 as pairs,
        (octet_length(b.y) - octet_length(c.z))::float8 as escapes,
        ((octet_length(b.y) - octet_length(replace(b.y, ${NEWLINE}, ''))) / 2)::float8 as newlines,
        case when position(${UNIT} in b.y) = 0 then 0
          else (octet_length(b.y) - octet_length(replace(b.y, ${UNIT}, ''))) / 2 end::float8 as units,
        substr(convert_to(b.y, 'UTF8'), octet_length(b.y) - 2) = convert_to(${LAST_NEWLINE}, 'UTF8') as ends,
        (extract(epoch from p.updated_at) * 1000)::float8 as at
      from pastes p,
        lateral (select p.content_json || '' as x offset 0) a,
        lateral (select replace(a.x, ${PAIR}, '') as y offset 0) b,
        lateral (select replace(b.y, ${BACKSLASH}, '') as z offset 0) c
      where p.hash = ${hash}`;
    if (r === undefined) return { bytes: 0, lines: 0 };
    const n = (k: string): number => r[k] as number;
    const size =
      n('literal') <= 2
        ? { bytes: 0, lines: 0 }
        : {
            bytes: n('literal') - 2 - n('pairs') - n('escapes') - 4 * n('units'),
            lines: r['ends'] === true ? n('newlines') : n('newlines') + 1,
          };
    if (n('at') === updatedAt) {
      if (this.#sizes.size >= SIZES_KEPT) this.#sizes.delete(this.#sizes.keys().next().value as string);
      this.#sizes.set(key, size);
    }
    return size;
  }
}
