/**
 * The little of the DOM the browser module uses, typed here: the project compiles against
 * Node's types only, and the DOM's own would change the types of every server file.
 */
export interface El {
  hidden: boolean;
  textContent: string | null;
  innerHTML: string;
  value: string;
  name: string;
  type: string;
  action: string;
  src: string;
  href: string;
  readonly form: El | null;
  getAttribute(name: string): string | null;
  setAttribute(name: string, value: string): void;
  removeAttribute(name: string): void;
  querySelector(selector: string): El | null;
  querySelectorAll(selector: string): ArrayLike<El>;
  addEventListener(type: string, listener: (ev: Ev) => void): void;
  appendChild(child: El): El;
  insertBefore(child: El, before: El | null): El;
  readonly firstChild: El | null;
  submit(): void;
  focus(): void;
}

export interface Ev {
  preventDefault(): void;
  readonly target: El | null;
}

export interface Doc {
  readonly readyState: string;
  getElementById(id: string): El | null;
  querySelector(selector: string): El | null;
  querySelectorAll(selector: string): ArrayLike<El>;
  createElement(tag: string): El;
  createTextNode(text: string): El;
  addEventListener(type: string, listener: () => void): void;
}

export interface Loc {
  readonly hash: string;
  readonly origin: string;
  readonly pathname: string;
}

const g = globalThis as unknown as { document: Doc; location: Loc };

export const doc = (): Doc => g.document;
export const loc = (): Loc => g.location;

/** Runs `f` once the document is parsed. */
export function whenReady(f: () => void): void {
  if (doc().readyState === 'loading') doc().addEventListener('DOMContentLoaded', f);
  else f();
}
