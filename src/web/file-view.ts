import { filesOf, type PasteFile } from '../paste/files.ts';
import type { Paste } from '../paste/paste.ts';
import { type CodeView, codeView } from './code-view.ts';
import type { WebContext } from './context.ts';
import { FILE_VIEW_MAX_BYTES, fileLanguage } from './file-language.ts';

/** Files the page may show as text: their language is known and they are small enough. */
const shownAsText = (f: PasteFile): string | undefined =>
  f.size <= FILE_VIEW_MAX_BYTES ? fileLanguage(f.name) : undefined;

/**
 * The code views of `p`'s text files, by name, made with the page's own highlighter and
 * bounds (code-view.ts). Undefined when it has none to show (so the page waits for nothing);
 * a file that is not valid UTF-8, or cannot be read, is left a download.
 */
export function fileViews(ctx: WebContext, p: Paste): Promise<Map<string, CodeView>> | undefined {
  const files = filesOf(p).filter((f) => shownAsText(f) !== undefined);
  // A one-time paste's files are its reader's to fetch once; an encrypted paste's are not ours to read.
  if (files.length === 0 || p.burn_after_read === 1 || p.encrypted === 1) return undefined;
  return (async () => {
    const out = new Map<string, CodeView>();
    for (const [i, f] of files.entries()) {
      const text = await ctx.deps.pastes.fileText(f, FILE_VIEW_MAX_BYTES).catch(() => null);
      if (text === null) continue;
      const language = shownAsText(f) as string;
      out.set(f.name, codeView(`file-code-${i}`, { content: text, language, highlight: 1 }));
    }
    return out;
  })();
}
