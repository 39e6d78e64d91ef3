/**
 * A paste's text read from the JSON string literal it is kept as (paste.ts), without decoding
 * all of it: the page of a long paste shows its beginning, and says how long the whole is
 * (README, Web pages). Decoding a 64 MiB literal held the event loop for most of a second.
 */

/** The most characters of the literal one character of the text can take (`\uXXXX`). */
const WIDEST = 6;

/**
 * The first `chars` characters (UTF-16 units) of the text `literal` holds, or all of a shorter
 * one, decoded from the literal's beginning only; `complete` false: `literal` is only the
 * literal's beginning, cut anywhere.
 */
export function literalHead(literal: string, chars: number, complete = true): string {
  const end = Math.min(complete ? literal.length - 1 : literal.length, 1 + chars * WIDEST);
  if (complete && end >= literal.length - 1) return (JSON.parse(literal) as string).slice(0, chars);
  // Cut before an escape the end would split: walk the escapes, each a backslash and what follows.
  let cut = end;
  for (let i = literal.indexOf('\\', 1); i !== -1 && i < end; i = literal.indexOf('\\', i + 2)) {
    const width = literal.charCodeAt(i + 1) === 117 ? WIDEST : 2;
    if (i + width > end) {
      cut = i;
      break;
    }
    i += width - 2;
  }
  return (JSON.parse(`${literal.slice(0, cut)}"`) as string).slice(0, chars);
}

/** The size of a whole text: its UTF-8 bytes, and its lines as a page counts them (a final newline starts none). */
export interface TextSize {
  bytes: number;
  lines: number;
}

/**
 * Counts the UTF-8 bytes and the lines of the text a JSON string literal holds, fed the
 * literal a slice at a time (quotes included) in order, so that a long one is counted
 * between other work. An escape a slice cuts is kept for the next one.
 */
export class LiteralCounter {
  #bytes = 0;
  #newlines = 0;
  /** Whether the text so far ends with a newline, and whether it is empty. */
  #endsNewline = false;
  #empty = true;
  /** The start of an escape the last slice cut. */
  #carry = '';
  /** Characters of the literal fed so far (for the quotes). */
  #fed = 0;

  feed(slice: string): void {
    let s = this.#carry + slice;
    this.#carry = '';
    if (this.#fed === 0 && s.startsWith('"')) s = s.slice(1);
    this.#fed += slice.length;
    let done = s.length;
    let lastEscapeEnd = -1;
    let lastEscape = 0;
    let save = 0;
    for (let i = s.indexOf('\\'); i !== -1; i = s.indexOf('\\', i)) {
      const kind = s.charCodeAt(i + 1);
      const width = kind === 117 ? WIDEST : 2;
      if (Number.isNaN(kind) || i + width > s.length) {
        done = i;
        break;
      }
      if (kind === 117) {
        // `\uXXXX` (JSON.stringify writes it only for control characters): the UTF-8 of that code unit.
        const unit = Number.parseInt(s.slice(i + 2, i + 6), 16);
        save += WIDEST - (unit < 0x80 ? 1 : unit < 0x800 ? 2 : unit >= 0xd800 && unit <= 0xdfff ? 2 : 3);
      } else {
        save += 1;
        if (kind === 110) this.#newlines++;
      }
      i += width;
      lastEscapeEnd = i;
      lastEscape = kind;
    }
    // Nor is a surrogate pair cut in two: each half alone would count three bytes.
    const last = s.charCodeAt(done - 1);
    if (done === s.length && last >= 0xd800 && last <= 0xdbff) done--;
    if (done < s.length) this.#carry = s.slice(done);
    let part = done === s.length ? s : s.slice(0, done);
    // The closing quote ends the last slice.
    const closed = this.#carry === '' && part.endsWith('"') && lastEscapeEnd !== part.length;
    if (closed) part = part.slice(0, -1);
    if (part.length === 0) return;
    this.#bytes += Buffer.byteLength(part) - save;
    this.#empty = false;
    this.#endsNewline = lastEscapeEnd === part.length && lastEscape === 110;
  }

  /** The size of the text fed so far, once its literal's last slice is in. */
  get size(): TextSize {
    if (this.#empty) return { bytes: 0, lines: 0 };
    return { bytes: this.#bytes, lines: this.#endsNewline ? this.#newlines : this.#newlines + 1 };
  }
}

/** The characters of a literal counted at once: a slice's count holds the event loop for about a millisecond. */
export const COUNT_SLICE_CHARS = 1_048_576;

/** The size of the text `literal` holds, counted at once. */
export function literalSizeNow(literal: string): TextSize {
  const counter = new LiteralCounter();
  counter.feed(literal);
  return counter.size;
}

/** The size of the text `literal` holds, counted a slice at a time, the event loop free between slices. */
export async function literalSize(literal: string): Promise<TextSize> {
  const counter = new LiteralCounter();
  for (let at = 0; at < literal.length; at += COUNT_SLICE_CHARS) {
    if (at > 0) await new Promise((resolve) => setImmediate(resolve));
    counter.feed(literal.slice(at, at + COUNT_SLICE_CHARS));
  }
  return counter.size;
}
