import { literalHead, literalSize, type TextSize } from '../paste/literal.ts';
import type { Paste } from '../paste/paste.ts';
import { VersionCache } from '../pipeline/version-cache.ts';
import { ownedUtf8Bytes } from '../http/text-bytes.ts';
import { stringBytes } from '../cache/second-chance.ts';
import { codeView, headView, PAGE_HEAD_CHARS, type CodeView } from './code-view.ts';
import { raw, type SafeHtml } from './html.ts';
import { qrModules, qrSvgOf, type QrModules } from './qr.ts';

/** One version stands for a QR code: its link never changes for a paste. */
const LINK = Symbol('a short link');

/**
 * Marks where a cached page's one changing part goes (a view count, a CSRF token): the page's
 * first NUL (see `page`).
 */
export const PAGE_SLOT: SafeHtml = raw('\u0000');

/** The home page as an anonymous visitor gets it, and what it was written from. */
interface HomePage {
  /** The paste objects it shows, held weakly: a paste's text may be a megabyte. */
  pastes: WeakRef<Paste>[];
  names: readonly string[];
  minute: number;
  body: Buffer;
}

/** Whether `refs` still name exactly `pastes`, in order (a collected object names nothing). */
const samePastes = (refs: readonly WeakRef<Paste>[], pastes: readonly Paste[]): boolean =>
  refs.length === pastes.length && refs.every((r, i) => r.deref() === pastes[i]);

const sameNames = (a: readonly string[], b: readonly string[]): boolean =>
  a.length === b.length && a.every((x, i) => x === b[i]);

/** Pages of the home page's list kept whole: the recent list holds ten (README, Web pages). */
const HOME_PAGES = 10;

/**
 * A paste whose code block and page are kept the first time they are made: past 32 KB of
 * text, highlighting costs a second view too much to pay again (measured: see
 * bench/README.md).
 */
const long = (version: unknown): boolean => isDear(version as Paste);

/** Whether a paste's code block is dear to make (`long`): its page makes it apart (paste-view.ts). */
export const isDear = (p: Pick<Paste, 'content_json'>): boolean => p.content_json.length > 32_768;

/**
 * The stored literal (paste/paste.ts), in characters, past which a code block is made from
 * the text's beginning alone (code-view.ts, headView): decoding and counting all of a 64 MiB
 * text held the event loop for most of a second.
 */
const LONG_LITERAL = 1_048_576;

/** Whether a paste's code block is made from its text's beginning alone (`PageParts.longCode`). */
export const isLong = (p: Pick<Paste, 'content_json'>): boolean => p.content_json.length > LONG_LITERAL;

/** The parts PageParts makes once and reuses: QR codes, code blocks, anonymous pages, home pages. */
export type PagePart = 'qr' | 'code' | 'page' | 'home';

/** A whole page made once, around the one thing that changes per view: its count. */
export interface PageAround {
  head: Buffer;
  tail: Buffer;
  /** The minute (epoch ms / 60,000) it was written in. */
  minute: number;
}

/**
 * The costly parts of the paste page, made once and reused by the views that follow, in
 * byte-bounded caches (pipeline/version-cache.ts), least recently used out first:
 * - the QR code of each short link, kept as its modules (a bit each: enough for every paste
 *   people open, where its far larger markup would not be; drawing it is cheap), for the
 *   share card's image (`/p/{hash}/qr.svg`);
 * - the highlighted code block of each paste version, with its line count and size;
 * - an anonymous visitor's whole page of a paste version, as bytes around its view count,
 *   for the minute its relative times ("3 minutes ago") were written in; and a one-time
 *   paste's warning page, as bytes around its form's CSRF token.
 * - the home page of an anonymous visitor, each of its ten pages, for as long as it would
 *   be written the same: the same paste objects (a store object is one version of a
 *   paste), the same authors' names, the same minute.
 * Half of `maxBytes` goes to pages, three eighths to code blocks, an eighth to QR codes;
 * the home pages (ten at most) come on top. A code block or page of a paste up to 32 KB is
 * kept only once it is asked for again soon after (`long`): its first view writes it and
 * lets it go.
 */
export class PageParts {
  readonly #qrs: VersionCache<QrModules>;
  readonly #code: VersionCache<CodeView>;
  readonly #pages: VersionCache<PageAround>;
  readonly #home = new Map<number, HomePage>();
  /** Long texts' sizes, counted once per paste version. */
  readonly #sizes = new WeakMap<Paste, TextSize>();
  #homeMade = 0;
  #homeReused = 0;

  constructor(maxBytes: number) {
    // Markup is counted as V8 keeps it (two bytes a character once one is not Latin-1); entries ~150 bytes more.
    this.#qrs = new VersionCache<QrModules>(maxBytes / 8, (m) => m.bits.length + 150);
    // A short paste's code block and page are kept once asked for again (pipeline/version-cache.ts);
    // a long one's, and a QR code (small, and dear to make), the first time.
    this.#code = new VersionCache<CodeView>((3 * maxBytes) / 8, (view) => stringBytes(view.block.value) + 150, long);
    this.#pages = new VersionCache<PageAround>(maxBytes / 2, (p) => p.head.length + p.tail.length + 150, long);
  }

  /** The QR code of a short link, as an SVG document. */
  qr(link: string, label: string): string {
    return qrSvgOf(
      this.#qrs.get(link, LINK, () => qrModules(link)),
      label,
    );
  }

  /** One version of a Markdown paste rendered (markdown-view.ts), kept as its code block is. */
  markdown(p: Paste, make: () => CodeView): CodeView {
    return this.#code.get(`markdown:${p.hash}`, p, make);
  }

  /** Whether the code block (or rendered Markdown) of this version of a paste is kept. */
  hasCode(id: string, p: Paste): boolean {
    return this.#code.has(`${id}:${p.hash}`, p) || this.#code.has(`markdown:${p.hash}`, p);
  }

  /** The code block of one version of a paste; `text` decodes its content (called only when it must be made). */
  code(id: string, p: Paste, text: () => string, lines?: string[]): CodeView {
    return this.#code.get(`${id}:${p.hash}`, p, () =>
      codeView(id, { content: text(), language: p.language, highlight: p.highlight, ...(lines && { lines }) }),
    );
  }

  /**
   * The size of a long text (`isLong`) the whole of which `p` holds: counted once per
   * version, a slice at a time, the event loop free between slices.
   */
  sizeOf(p: Paste): TextSize | Promise<TextSize> {
    const known = this.#sizes.get(p);
    if (known !== undefined) return known;
    return literalSize(p.content_json).then((counted) => {
      this.#sizes.set(p, counted);
      return counted;
    });
  }

  /**
   * `code` of a long text, made from its beginning alone (code-view.ts, headView), given the
   * whole text's size: `sizeOf`'s, or the store's when `p` holds only the beginning
   * (PasteService.readHead).
   */
  longCode(id: string, p: Paste, size: TextSize, made?: { text: string; lines: string[] }): CodeView {
    return this.#code.get(`${id}:${p.hash}`, p, () =>
      headView(
        id,
        {
          content: made?.text ?? literalHead(p.content_json, PAGE_HEAD_CHARS),
          language: p.language,
          highlight: p.highlight,
          ...(made && { lines: made.lines }),
        },
        size,
      ),
    );
  }

  /**
   * An anonymous visitor's `kind` of page of one version of a paste, written in minute
   * `minute`, with `fill` (a view count, a CSRF token) in its one changing part: `render`
   * writes the page around whatever it is given for that part, which must come before
   * anything of the paste's own text (whose NULs are its own; a title and a user name have
   * none). A page kept is written once, with PAGE_SLOT, and answered as bytes around
   * `fill`; a page not kept (yet: see `keepFirst` in pipeline/version-cache.ts) is written with
   * `fill` in place, as one string.
   */
  page(
    kind: 'paste' | 'source' | 'warning',
    p: Paste,
    minute: number,
    fill: SafeHtml,
    render: (part: SafeHtml) => string,
  ): readonly (Buffer | string)[] {
    const make = (): PageAround => {
      // One allocation for the page, head and tail views of it: in UTF-8 a zero byte is only
      // ever a NUL, so the first one is the slot.
      const bytes = ownedUtf8Bytes(render(PAGE_SLOT));
      const slot = bytes.indexOf(0);
      if (slot === -1) throw new Error('a cached page must hold PAGE_SLOT');
      return { head: bytes.subarray(0, slot), tail: bytes.subarray(slot + 1), minute };
    };
    const kept = this.#pages.getOr(
      `${kind}:${p.hash}`,
      p,
      make,
      () => null,
      (page) => page.minute === minute,
    );
    return kept === null ? [render(fill)] : [kept.head, fill.value, kept.tail];
  }

  /**
   * Page `pageNo` of the home page as a visitor who is not logged in gets it, listing
   * `pastes` by authors `names` in minute `minute`: `render` writes it when any of them
   * differs from the last time. The pastes are held weakly, so the page never keeps a
   * paste (whose text may be a megabyte) in memory beyond the store's own cache.
   */
  home(
    pageNo: number,
    pastes: readonly Paste[],
    names: readonly string[],
    minute: number,
    render: () => string,
  ): Buffer {
    const kept = this.#home.get(pageNo);
    if (
      kept !== undefined &&
      kept.minute === minute &&
      samePastes(kept.pastes, pastes) &&
      sameNames(kept.names, names)
    ) {
      this.#homeReused++;
      return kept.body;
    }
    this.#homeMade++;
    const body = ownedUtf8Bytes(render());
    if (pageNo <= HOME_PAGES)
      this.#home.set(pageNo, { pastes: pastes.map((p) => new WeakRef(p)), names, minute, body });
    return body;
  }

  /** How often each part was made, and how often it was answered from what was made before (README, Metrics). */
  get counts(): Record<PagePart, { made: number; reused: number }> {
    const of = (c: { made: number; reused: number }) => ({ made: c.made, reused: c.reused });
    return {
      qr: of(this.#qrs),
      code: of(this.#code),
      page: of(this.#pages),
      home: { made: this.#homeMade, reused: this.#homeReused },
    };
  }

  get bytes(): number {
    let home = 0;
    for (const h of this.#home.values()) home += h.body.length;
    return this.#qrs.bytes + this.#code.bytes + this.#pages.bytes + home;
  }
}
