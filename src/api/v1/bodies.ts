import type { Paste } from '../../paste/paste.ts';
import { VersionCache } from '../../pipeline/version-cache.ts';

/**
 * Text this long is kept encoded as bytes per paste version: shorter, encoding it per answer
 * is cheaper than the memory. (Buffers this large are never slices of Node's shared 8 KiB
 * pool, which a long-lived slice would keep alive whole.)
 */
export const LARGE_CHARS = 16 * 1024;

/** A paste version's fields as rendered, and the UTF-8 sizes of them and of its content (as JSON). */
export interface Rendered {
  readonly text: string;
  readonly bytes: number;
  readonly contentBytes: number;
}

/**
 * The pieces of the read answers (`paste.php`, `raw.php`) that do not change between reads
 * of one paste version, rendered once. A stored paste object is never changed (the store
 * makes a new one for every change, burn and expiry), so the object is the version: a
 * rendering is found only for the very object it was made from, and nothing stale is sent.
 *
 * - The paste's fields but the view count, as JSON, with its size in UTF-8 and that of the
 *   paste's content, so an answer's Content-Length is a sum rather than a scan of its text:
 *   kept in a WeakMap, so it lives exactly as long as the paste object (the store's cache
 *   bounds how many there are, and counts room for this in each entry's size).
 * - The text of a large paste as bytes (its JSON literal, its UTF-8), so megabytes are not
 *   encoded again on every read: kept in a map bounded by `maxBytes`, least recently used
 *   out first. An entry holds its paste object weakly (pipeline/version-cache.ts) but
 *   counts that object's text too: its bytes are of use only while the text is in memory.
 */
export class ReadBodies {
  readonly #fields = new WeakMap<Paste, Rendered>();
  readonly #encoded: VersionCache<Buffer>;

  constructor(maxBytes: number) {
    this.#encoded = new VersionCache(maxBytes, (bytes, p) => bytes.length + (p as Paste).content_json.length);
  }

  /** The rendering of `p`'s fields, made by `render(context, p)` the first time this version is read. */
  fields<D>(p: Paste, render: (context: D, p: Paste) => string, context: D): Rendered {
    let out = this.#fields.get(p);
    if (out === undefined) {
      const text = render(context, p);
      out = { text, bytes: Buffer.byteLength(text), contentBytes: Buffer.byteLength(p.content_json) };
      this.#fields.set(p, out);
    }
    return out;
  }

  /**
   * `p`'s text in the form `kind` names, as bytes made by `encode` once per version. An
   * entry counts its paste object's text too (one byte a character, at least).
   */
  encoded(p: Paste, kind: 'json' | 'utf8', encode: () => Buffer): Buffer {
    return this.#encoded.get(`${kind}:${p.hash}`, p, encode);
  }

  /** Bytes held for large texts (for tests and the README's memory figures). */
  get bytes(): number {
    return this.#encoded.bytes;
  }
}
