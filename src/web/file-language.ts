import { languageNamed } from '../paste/language.ts';

/*
 * Which files of a paste its page shows as text, and in which language: the server's page
 * (file-view.ts) and the browser's, for an encrypted paste's files (client/encrypted-paste.ts).
 * No Node API here: the browser runs this module too.
 */

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
