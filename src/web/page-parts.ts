import type { Paste } from '../paste/paste.ts';
import { VersionCache } from '../pipeline/version-cache.ts';
import { codeView, type CodeView } from './code-view.ts';
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
  // V8 keeps markup one byte a character when it is Latin-1, else two: count two.
  readonly #qrs: VersionCache<SafeHtml>;
  readonly #code: VersionCache<CodeView>;

  constructor(maxBytes: number) {
    this.#qrs = new VersionCache<SafeHtml>(maxBytes / 4, (svg) => 2 * svg.value.length);
    this.#code = new VersionCache<CodeView>(maxBytes - maxBytes / 4, (view) => 2 * view.block.value.length);
  }

  /** The QR code of a short link, as inline SVG. */
  qr(link: string, label: string): SafeHtml {
    return this.#qrs.get(link, LINK, () => qrSvg(link, label));
  }

  /** The code block of one version of a paste; `text` decodes its content (called only when it must be made). */
  code(id: string, p: Paste, text: () => string): CodeView {
    return this.#code.get(`${id}:${p.hash}`, p, () => codeView(id, { content: text(), language: p.language, highlight: p.highlight }));
  }

  get bytes(): number {
    return this.#qrs.bytes + this.#code.bytes;
  }
}
