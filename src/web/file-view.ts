import { filesOf, type PasteFile } from '../paste/files.ts';
import { languageNamed } from '../paste/language.ts';
import type { Paste } from '../paste/paste.ts';
import { type CodeView, codeView } from './code-view.ts';
import type { WebContext } from './context.ts';

/**
 * Text files shown on the paste page highlighted as the text is (README, Files): a file
 * whose name tells its language and whose bytes are valid UTF-8 of at most this many.
 * Larger ones stay downloads: the page shows a file from its store on every view.
 */
export const FILE_VIEW_MAX_BYTES = 256 * 1024;

/** Whole names that tell a language with no extension. */
const NAMED: Readonly<Record<string, string>> = {
  makefile: 'makefile',
  gnumakefile: 'makefile',
  dockerfile: 'dockerfile',
  containerfile: 'dockerfile',
  'cmakelists.txt': 'cmake',
  gemfile: 'ruby',
  rakefile: 'ruby',
  vagrantfile: 'ruby',
  jenkinsfile: 'groovy',
};

/**
 * The language a file's name tells (its whole name, else its extension as a language's
 * name or alias: language-table.ts), or undefined.
 */
export function fileLanguage(name: string): string | undefined {
  const lower = name.toLowerCase();
  const named = NAMED[lower];
  if (named !== undefined) return languageNamed(named);
  const dot = lower.lastIndexOf('.');
  if (dot <= 0 || dot === lower.length - 1) return undefined;
  return languageNamed(lower.slice(dot + 1));
}

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
