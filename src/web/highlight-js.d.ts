// The part of highlight.js the server uses, declared here because its own declarations pull
// in the DOM's types, which clash with Node's (the project compiles against Node's alone).
export interface Mode {
  [key: string]: unknown;
}
export interface Language {
  name?: string;
  aliases?: string[];
  [key: string]: unknown;
}
export type LanguageFn = (hljs: HLJSApi) => Language;
/** A node of the token tree a highlighting builds: a scope and what it holds. */
export interface TokenNode {
  scope?: string;
  language?: string;
  sublanguage?: boolean;
  children: (string | TokenNode)[];
}
export interface HighlightResult {
  value: string;
  relevance: number;
  language?: string;
  illegal: boolean;
  _emitter: { rootNode: TokenNode };
  /** The innermost mode open at the end: the language itself when none is. */
  _top?: unknown;
}
export interface HLJSApi {
  highlight(code: string, options: { language: string; ignoreIllegals?: boolean }): HighlightResult;
  highlightAuto(code: string, languageSubset?: string[]): HighlightResult;
  registerLanguage(name: string, fn: LanguageFn): void;
  getLanguage(name: string): Language | undefined;
  listLanguages(): string[];
  configure(options: Record<string, unknown>): void;
  newInstance(): HLJSApi;
  versionString: string;
  HASH_COMMENT_MODE: Mode;
  C_LINE_COMMENT_MODE: Mode;
  C_BLOCK_COMMENT_MODE: Mode;
  BACKSLASH_ESCAPE: Mode;
}
declare const hljs: HLJSApi;
export default hljs;
