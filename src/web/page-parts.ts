import type { Paste } from '../paste/paste.ts';
import { VersionCache } from '../pipeline/version-cache.ts';
import { codeBlock, type Code } from './code-view.ts';
import type { SafeHtml } from './html.ts';
import { qrSvg } from './qr.ts';

/** One version stands for a QR code: its link never changes for a paste. */
const LINK = Symbol('a short link');

/**
 * The expensive parts of a paste page, made once and reused by every view: the QR code of
 * the short link (it depends on the link alone), and the highlighted code block (on one
 * version of the paste). What changes per view (the view count, relative times, who is
 * looking, the form tokens) is small and rendered each time around them. Bounded in bytes,
 * least recently used out first (pipeline/version-cache.ts).
 */
export class PageParts {
  readonly #cache: VersionCache<SafeHtml>;

  constructor(maxBytes: number) {
    // V8 keeps markup one byte a character when it is Latin-1, else two: count two.
    this.#cache = new VersionCache<SafeHtml>(maxBytes, (html) => 2 * html.value.length);
  }

  /** The QR code of a short link, as inline SVG. */
  qr(link: string, label: string): SafeHtml {
    return this.#cache.get(`qr:${link}`, LINK, () => qrSvg(link, label));
  }

  /** The code block of one version of a paste, whose text is `content`. */
  code(id: string, p: Paste, content: string): SafeHtml {
    const code: Code = { content, language: p.language, highlight: p.highlight };
    return this.#cache.get(`code:${id}:${p.hash}`, p, () => codeBlock(id, code));
  }

  get bytes(): number {
    return this.#cache.bytes;
  }
}
