import type { Paste, Receipt } from '../paste/paste.ts';

const sameReceipt = (a: Receipt | null | undefined, b: Receipt | null | undefined): boolean =>
  a === b ||
  (a !== null &&
    a !== undefined &&
    b !== null &&
    b !== undefined &&
    a.at === b.at &&
    a.via === b.via &&
    a.token_id === b.token_id);

/** Whether two pastes are the same version: every field alike. */
function sameVersion(a: Paste, b: Paste): boolean {
  return (
    a.hash === b.hash &&
    a.revision === b.revision &&
    a.updated_at === b.updated_at &&
    a.created_at === b.created_at &&
    a.expire_at === b.expire_at &&
    a.view_count === b.view_count &&
    a.burned === b.burned &&
    a.burn_after_read === b.burn_after_read &&
    a.highlight === b.highlight &&
    a.privacy === b.privacy &&
    a.owner_id === b.owner_id &&
    a.password === b.password &&
    a.language === b.language &&
    a.title === b.title &&
    a.content_json === b.content_json &&
    sameReceipt(a.receipt, b.receipt)
  );
}

/**
 * One object per version of a paste, as the file store's cache hands out: what the server
 * makes from a paste (its code block, its page) is kept by the object's identity
 * (pipeline/version-cache.ts), so a row read again unchanged must come back as the object
 * read before, or every view would make it anew. Each read still asks the database (another
 * server may have changed the paste). The objects are kept within a byte budget
 * (PASTE_CACHE_MB, as the file store's), least recently read out first.
 */
export class PasteIdentity {
  readonly #last = new Map<string, Paste>();
  #bytes = 0;

  constructor(private readonly maxBytes: number) {}

  /** The object read before for this version of the paste, or `fresh`, remembered from now on. */
  of(fresh: Paste): Paste {
    const before = this.#last.get(fresh.hash);
    const kept = before !== undefined && sameVersion(before, fresh) ? before : fresh;
    if (before !== undefined) {
      this.#last.delete(fresh.hash);
      this.#bytes -= sizeOf(before);
    }
    const size = sizeOf(kept);
    if (size > this.maxBytes) return kept;
    this.#last.set(fresh.hash, kept);
    this.#bytes += size;
    for (const [hash, p] of this.#last) {
      if (this.#bytes <= this.maxBytes) break;
      this.#last.delete(hash);
      this.#bytes -= sizeOf(p);
    }
    return kept;
  }
}

/** What a kept paste costs: its text (two bytes a character at most), and the rest, roughly. */
const sizeOf = (p: Paste): number => 2 * p.content_json.length + 300;
