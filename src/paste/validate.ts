import type { Fields, FieldValue } from '../http/fields.ts';
import { envelopeProblem } from './envelope.ts';
import { isExpiry, type Expiry } from './expiry.ts';
import { languageNamed } from './language.ts';
import { PRIVACIES, type Privacy } from './paste.ts';

export const TITLE_MAX_CHARS = 200;
export const PASSWORD_MAX_CHARS = 1024;

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** One thing wrong with a submitted field. `tooLarge` problems answer 413, the rest 400. */
export interface Problem {
  field: string;
  message: string;
  tooLarge?: true;
}

export interface CreateInput {
  title: string;
  content: string;
  /** `auto` (the default) means "detect from the content". */
  language: string;
  privacy: Privacy;
  expiry: Expiry;
  password: string | null;
  highlight: 0 | 1;
  burn_after_read: 0 | 1;
  /** 1: `content` is an envelope the client encrypted (paste/envelope.ts), kept as it is. Absent: 0. */
  encrypted?: 0 | 1;
}

export interface EditInput {
  title?: string;
  content?: string;
  language?: string;
  privacy?: Privacy;
  expiry: Expiry | 'keep';
  password?: string;
  clear_password: 0 | 1;
  /** Given only with new content: whether that content is an envelope (paste/envelope.ts). */
  encrypted?: 0 | 1;
}

/** What is wrong with a title, or null: too long, or more than one line (README, Create a paste). */
export function titleProblem(v: string): string | null {
  if ([...v].length > TITLE_MAX_CHARS) return `title must be at most ${TITLE_MAX_CHARS} characters`;
  if (/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/.test(v))
    return 'title must be a single line without control characters';
  return null;
}

/** Whether a string holds half of a surrogate pair, which no UTF-8 can hold. */
export const hasLoneSurrogate = (v: string): boolean => LONE_SURROGATE.test(v);

/** `warning`: something the request asked for was taken otherwise (an unknown language stored as text). */
export type Validated<T> = { ok: true; value: T; warning?: string } | { ok: false; problems: Problem[] };

/** What an answer says of a language name no grammar knows (README, Languages). */
export const unknownLanguageWarning = (name: string): string => `language "${name}" is not known; stored as text`;

/** Field readers that record a problem and return undefined when a value is unusable. */
class Reader {
  readonly problems: Problem[] = [];
  warning: string | undefined;
  constructor(private readonly fields: Fields) {}

  private raw(name: string): FieldValue | undefined {
    return Object.hasOwn(this.fields, name) ? this.fields[name] : undefined;
  }

  string(name: string): string | undefined {
    const v = this.raw(name);
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'string') {
      this.problems.push({ field: name, message: `${name} must be a string` });
      return undefined;
    }
    // A JSON body can escape half a surrogate pair ("\ud800"), which no UTF-8 can hold: a
    // form body refuses it when it is decoded, and so do these rules for every body.
    if (LONE_SURROGATE.test(v)) {
      this.problems.push({
        field: name,
        message: `${name} must be valid Unicode text (it holds half of a surrogate pair)`,
      });
      return undefined;
    }
    return v;
  }

  title(): string | undefined {
    const v = this.string('title');
    if (v === undefined) return undefined;
    const problem = titleProblem(v);
    if (problem !== null) this.problems.push({ field: 'title', message: problem });
    return v;
  }

  /** With `files`, the request brings files, and the text may be absent or empty (README, Files). */
  content(maxBytes: number, required: boolean, files = false): string | undefined {
    const v = this.string('content');
    if (v === undefined) {
      if (required && !files && !this.problems.some((p) => p.field === 'content')) {
        this.problems.push({ field: 'content', message: 'content is required' });
      }
      return undefined;
    }
    if (v.length === 0) {
      if (!files) this.problems.push({ field: 'content', message: 'content must not be empty' });
    } else if (Buffer.byteLength(v, 'utf8') > maxBytes) {
      this.problems.push({ field: 'content', message: `content exceeds ${maxBytes} bytes`, tooLarge: true });
    }
    return v;
  }

  language(): string | undefined {
    const v = this.string('language');
    if (v === undefined || v === '') return undefined;
    const lower = v.toLowerCase();
    if (lower === 'auto') return lower;
    const name = languageNamed(lower);
    // A client that names a language we lack (`vue`) keeps its paste, as text, and is told so.
    if (name === undefined) {
      this.warning = unknownLanguageWarning(v.length > 100 ? `${v.slice(0, 100)}…` : v);
      return 'text';
    }
    return name;
  }

  privacy(): Privacy | undefined {
    const v = this.string('privacy');
    if (v === undefined) return undefined;
    const match = PRIVACIES.find((p) => p === v);
    if (match === undefined)
      this.problems.push({ field: 'privacy', message: 'privacy must be public, unlisted or private' });
    return match;
  }

  expiry(allowKeep: boolean): Expiry | 'keep' | undefined {
    const v = this.string('expiry');
    if (v === undefined) return undefined;
    if (isExpiry(v) || (allowKeep && v === 'keep')) return v;
    const allowed = `${allowKeep ? 'keep, ' : ''}never, 10m, 1h, 1d, 1w or 1m`;
    this.problems.push({ field: 'expiry', message: `expiry must be one of ${allowed}` });
    return undefined;
  }

  password(): string | undefined {
    const v = this.string('password');
    if (v === undefined || v === '') return undefined;
    if (v.length > PASSWORD_MAX_CHARS) {
      this.problems.push({ field: 'password', message: `password must be at most ${PASSWORD_MAX_CHARS} characters` });
    }
    return v;
  }

  /** README, Create a paste: 0/1, "0"/"1" and JSON false/true; anything else is refused. */
  flag(name: string): 0 | 1 | undefined {
    const v = this.raw(name);
    if (v === undefined) return undefined;
    if (v === 0 || v === '0' || v === false) return 0;
    if (v === 1 || v === '1' || v === true) return 1;
    this.problems.push({ field: name, message: `${name} must be 0 or 1` });
    return undefined;
  }
}

/** With encrypted=1, content that is not an envelope is refused (400), by its shape only. */
function sealed(r: Reader, content: string | undefined): void {
  if (content === undefined || content === '' || r.problems.some((p) => p.field === 'content')) return;
  const problem = envelopeProblem(content);
  if (problem !== null) r.problems.push({ field: 'content', message: problem });
}

function done<T>(r: Reader, value: T): Validated<T> {
  if (r.problems.length > 0) return { ok: false, problems: r.problems };
  return r.warning === undefined ? { ok: true, value } : { ok: true, value, warning: r.warning };
}

export function validateCreate(fields: Fields, maxBytes: number, files = false): Validated<CreateInput> {
  const r = new Reader(fields);
  const value: CreateInput = {
    title: r.title() ?? '',
    content: r.content(maxBytes, true, files) ?? '',
    language: r.language() ?? 'auto',
    privacy: r.privacy() ?? 'public',
    expiry: (r.expiry(false) as Expiry | undefined) ?? 'never',
    password: r.password() ?? null,
    highlight: r.flag('highlight') ?? 1,
    burn_after_read: r.flag('burn_after_read') ?? 0,
  };
  const encrypted = r.flag('encrypted');
  if (encrypted !== undefined) value.encrypted = encrypted;
  if (encrypted === 1) sealed(r, value.content);
  return done(r, value);
}

export function validateEdit(fields: Fields, maxBytes: number, files = false): Validated<EditInput> {
  const r = new Reader(fields);
  const value: EditInput = { expiry: r.expiry(true) ?? 'keep', clear_password: r.flag('clear_password') ?? 0 };
  const title = r.title();
  const content = r.content(maxBytes, false, files);
  const language = r.language();
  const privacy = r.privacy();
  const password = r.password();
  if (title !== undefined) value.title = title;
  if (content !== undefined) value.content = content;
  if (language !== undefined) value.language = language;
  if (privacy !== undefined) value.privacy = privacy;
  if (password !== undefined) value.password = password;
  const encrypted = r.flag('encrypted');
  if (encrypted !== undefined) value.encrypted = encrypted;
  if (encrypted === 1) sealed(r, content);
  if (password !== undefined && value.clear_password === 1) {
    r.problems.push({ field: 'password', message: 'password and clear_password=1 cannot be combined' });
  }
  return done(r, value);
}
