import type { FileHandle } from 'node:fs/promises';
import { StringDecoder } from 'node:string_decoder';
import { COUNT_SLICE_CHARS, LiteralCounter, literalHead, type TextSize } from '../paste/literal.ts';
import { encodeContent, type Paste } from '../paste/paste.ts';
import type { PasteHead } from '../paste/repository.ts';
import { openIfThere } from '../storage/fs.ts';
import { DamagedRecord, parseFile } from './paste-record.ts';

/**
 * A paste file up to this size is read whole, as any read does; a larger one's page reads
 * its fields and the beginning of its text (README, Web pages), since reading and parsing
 * all of a 64 MiB file held the event loop for a second or more.
 */
export const WHOLE_FILE_BYTES = 1_048_576;

/** Room for the fields before the text: a title and a password hash are far shorter. */
const FIELDS_BYTES = 65_536;

/** Where the text's literal starts in a file `fileText` wrote (store/paste-record.ts): after the fields. */
const CONTENT = ',"content":';

/** Whole texts' sizes remembered, by file: counting one reads all of it. */
const SIZES_KEPT = 256;

/** The beginnings kept, in characters of their literals: a few dozen long pastes' pages. */
const HEADS_KEPT_CHARS = 8_388_608;

/**
 * Reads the beginning of long paste files. The text's size is counted from the rest of the
 * file a slice at a time, between other work, and remembered for that file (a change
 * replaces the file, so its inode, size and time say which version it is).
 */
export class PasteHeads {
  readonly #sizes = new Map<string, TextSize>();
  /**
   * The object read before from the same file, as the page's caches need one object per
   * version (pipeline/version-cache.ts), within HEADS_KEPT_CHARS, oldest out first.
   */
  readonly #heads = new Map<string, Paste>();
  #headChars = 0;

  #same(key: string, fresh: Paste): Paste {
    const before = this.#heads.get(key);
    if (before !== undefined) return before;
    this.#heads.set(key, fresh);
    this.#headChars += fresh.content_json.length;
    for (const [k, p] of this.#heads) {
      if (this.#headChars <= HEADS_KEPT_CHARS) break;
      this.#heads.delete(k);
      this.#headChars -= p.content_json.length;
    }
    return fresh;
  }

  /**
   * The paste in file `path` with only the first `chars` characters of its text, and the
   * whole text's size; 'whole' when the file should be read whole (short, or not laid out
   * as `fileText` writes it, or damaged: the whole read says how); null when there is none.
   */
  async read(path: string, chars: number): Promise<PasteHead | 'whole' | null> {
    const fh = await openIfThere(path);
    if (fh === null) return null;
    try {
      const st = await fh.stat();
      if (st.size <= WHOLE_FILE_BYTES) return 'whole';
      // UTF-8 takes at most three bytes for a UTF-16 unit, and the literal six units for one of the text.
      const want = Math.min(st.size, FIELDS_BYTES + 3 * (2 + 6 * chars));
      const start = Buffer.alloc(want);
      const { bytesRead } = await fh.read(start, 0, want, 0);
      const end = Buffer.alloc(2);
      await fh.read(end, 0, 2, st.size - 2);
      const text = start.toString('utf8', 0, bytesRead);
      const at = text.indexOf(CONTENT);
      if (!text.startsWith('{"v":1,"hash":"') || at === -1 || end.toString('latin1') !== '"}') return 'whole';
      let fields: Paste;
      try {
        fields = parseFile(`${text.slice(0, at)}${CONTENT}""}`);
      } catch (err) {
        if (err instanceof DamagedRecord) return 'whole';
        throw err;
      }
      const literalAt = at + CONTENT.length;
      // A file read to its end holds the whole literal, closing quote and all.
      const all = bytesRead === st.size;
      const head = literalHead(all ? text.slice(literalAt, -1) : text.slice(literalAt), chars, all);
      const key = `${path}\u0000${st.ino}:${st.size}:${st.mtimeMs}`;
      let size = this.#sizes.get(key);
      if (size === undefined) {
        size = await countText(fh, Buffer.byteLength(text.slice(0, literalAt)), st.size - 1);
        if (this.#sizes.size >= SIZES_KEPT) this.#sizes.delete(this.#sizes.keys().next().value as string);
        this.#sizes.set(key, size);
      }
      return { paste: this.#same(key, { ...fields, content_json: encodeContent(head) }), size };
    } finally {
      await fh.close();
    }
  }
}

/** The size of the text whose literal is bytes `from` to `to` of the file, read and counted a slice at a time. */
async function countText(fh: FileHandle, from: number, to: number): Promise<TextSize> {
  const counter = new LiteralCounter();
  const decoder = new StringDecoder('utf8');
  const buf = Buffer.alloc(COUNT_SLICE_CHARS);
  for (let at = from; at < to; ) {
    const { bytesRead } = await fh.read(buf, 0, Math.min(buf.length, to - at), at);
    if (bytesRead === 0) break;
    at += bytesRead;
    counter.feed(decoder.write(buf.subarray(0, bytesRead)));
  }
  counter.feed(decoder.end());
  return counter.size;
}
