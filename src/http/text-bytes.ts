/**
 * How text becomes bytes on the way out. V8's UTF-8 writer (Node 20) walks a string a
 * character at a time, where its Latin-1 writer copies, which is many times faster
 * (measured: see bench/README.md). For ASCII text both write the same bytes, and ASCII is
 * exactly the text whose UTF-8 length (`Buffer.byteLength`, which is fast) equals its
 * length in UTF-16 units: any other character takes two bytes or more, and a surrogate pair
 * four for its two units. So text is written as Latin-1 when it is ASCII, and as UTF-8
 * otherwise.
 */
export type TextEncoding = 'latin1' | 'utf8';

/** The encoding that writes `text` as its UTF-8 bytes fastest; `bytes` is its UTF-8 length when known. */
export const encodingOf = (text: string, bytes: number = Buffer.byteLength(text)): TextEncoding =>
  bytes === text.length ? 'latin1' : 'utf8';

/** `text`'s UTF-8 bytes, as `Buffer.from(text)` makes them. */
export const utf8Bytes = (text: string): Buffer => Buffer.from(text, encodingOf(text));

/**
 * `text`'s UTF-8 bytes in memory of their own, for bytes that are kept: `Buffer.from` puts
 * text under 4 KB in a slice of a shared 8 KB pool, which a long-lived slice keeps whole.
 */
export function ownedUtf8Bytes(text: string): Buffer {
  const n = Buffer.byteLength(text);
  const bytes = Buffer.allocUnsafeSlow(n);
  bytes.write(text, 0, n, encodingOf(text, n));
  return bytes;
}
