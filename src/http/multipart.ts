import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream, type WriteStream } from 'node:fs';
import { unlink } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import { join } from 'node:path';
import { HttpError } from './errors.ts';
import { emptyFields, type Fields, MAX_FIELDS } from './fields.ts';

/**
 * A `multipart/form-data` body read as it streams (RFC 7578): text parts become fields, file
 * parts are written to temporary files while their SHA-256 is computed, so an upload is
 * never held whole in memory; past a limit the read stops at once with 413.
 */

/** One file part, spooled to `path` (the caller moves it or calls `discardUploads`). */
export interface Upload {
  /** The filename the client gave, as given (checked by the caller). */
  readonly name: string;
  /** The part's Content-Type, lower-cased essence; `application/octet-stream` when absent. */
  readonly type: string;
  readonly size: number;
  readonly sha256: string;
  readonly path: string;
}

export interface MultipartLimits {
  /** Where file parts are spooled. */
  tmpDir: string;
  /** The part name whose parts are files (with a filename). */
  fileField: string;
  maxFileBytes: number;
  /**
   * A file part's own limit and the 413's message, from the text parts before it; without
   * it, `maxFileBytes`.
   */
  fileLimit?: (fields: Readonly<Fields>) => { bytes: number; message: string };
  maxFiles: number;
  /** When set, the first file part stops the read with this refusal (a sender who may bring none). */
  refuseFiles?: HttpError;
  /** All text parts' bytes together. */
  maxFieldBytes: number;
}

export interface Multipart {
  fields: Fields;
  files: Upload[];
}

/** A part's header block larger than this is refused (400): headers are a few hundred bytes. */
export const MAX_PART_HEADER_BYTES = 8 * 1024;

/** The boundary of a `multipart/form-data` Content-Type, or null when it is not one. */
export function multipartBoundary(contentType: string | undefined): string | null {
  if (contentType === undefined) return null;
  const [essence = '', ...params] = contentType.split(';').map((s) => s.trim());
  if (essence.toLowerCase() !== 'multipart/form-data') return null;
  for (const p of params) {
    const eq = p.indexOf('=');
    if (eq === -1 || p.slice(0, eq).trim().toLowerCase() !== 'boundary') continue;
    let v = p.slice(eq + 1).trim();
    if (v.startsWith('"') && v.endsWith('"') && v.length >= 2) v = v.slice(1, -1);
    // RFC 2046: 1 to 70 characters.
    return v.length >= 1 && v.length <= 70 ? v : null;
  }
  return null;
}

const bad = (message: string): HttpError => new HttpError('bad_request', message);
const tooLarge = (message: string): HttpError => new HttpError('payload_too_large', message);

/** Removes spooled uploads; one already moved away is no error. */
export async function discardUploads(files: readonly Pick<Upload, 'path'>[]): Promise<void> {
  await Promise.all(files.map((f) => unlink(f.path).catch(() => undefined)));
}

interface PartHead {
  name: string;
  filename: string | null;
  type: string;
}

/**
 * A quoted-string's value or a token, from `s` at `i`: [value, next index]. A backslash escapes
 * only `"` and itself: browsers and curl send any other backslash of a name as is (`C:\dir\a.png`).
 */
function paramValue(s: string, i: number): [string, number] {
  if (s[i] !== '"') {
    const end = s.indexOf(';', i);
    const stop = end === -1 ? s.length : end;
    return [s.slice(i, stop).trim(), stop];
  }
  let out = '';
  for (let j = i + 1; j < s.length; j++) {
    const c = s[j] as string;
    if (c === '\\' && (s[j + 1] === '"' || s[j + 1] === '\\')) out += s[++j];
    else if (c === '"') return [out, j + 1];
    else out += c;
  }
  return [out, s.length];
}

/** The parameters of a Content-Disposition value, names lower-cased. */
function dispositionParams(value: string): Map<string, string> {
  const out = new Map<string, string>();
  let i = value.indexOf(';');
  while (i !== -1 && i < value.length) {
    const eq = value.indexOf('=', i + 1);
    if (eq === -1) break;
    const name = value
      .slice(i + 1, eq)
      .trim()
      .toLowerCase();
    let j = eq + 1;
    while (value[j] === ' ') j++;
    const [v, next] = paramValue(value, j);
    if (!out.has(name)) out.set(name, v);
    i = value.indexOf(';', next);
  }
  return out;
}

/** RFC 5987's `UTF-8''percent-encoded` (or `ISO-8859-1''…`, which it also names), or null when it is neither. */
function extValue(v: string): string | null {
  const latin = /^iso-8859-1'[^']*'((?:[!#$&+.^_`|~0-9A-Za-z-]|%[0-9A-Fa-f]{2})*)$/i.exec(v);
  if (latin !== null)
    return (latin[1] as string).replace(/%([0-9A-Fa-f]{2})/g, (_, h: string) =>
      String.fromCharCode(Number.parseInt(h, 16)),
    );
  const m = /^utf-8'[^']*'(.*)$/i.exec(v);
  if (m === null) return null;
  try {
    return decodeURIComponent(m[1] as string);
  } catch {
    // decodeURIComponent throws URIError only: a malformed escape.
    return null;
  }
}

function parseHead(block: Buffer): PartHead {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(block);
  } catch {
    // A fatal TextDecoder throws TypeError exactly when the bytes are not UTF-8.
    throw bad('A multipart part header is not valid UTF-8');
  }
  let disposition: string | null = null;
  let type = 'application/octet-stream';
  for (const line of text.split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon <= 0) throw bad('A multipart part header is malformed');
    const key = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (key === 'content-disposition') disposition = value;
    else if (key === 'content-type') type = (value.split(';')[0] ?? '').trim().toLowerCase() || type;
  }
  if (disposition === null || !/^form-data\s*(;|$)/i.test(disposition))
    throw bad('A multipart part has no Content-Disposition: form-data');
  const params = dispositionParams(disposition);
  const name = params.get('name');
  if (name === undefined) throw bad('A multipart part has no name');
  const star = params.get('filename*');
  const filename = (star === undefined ? null : extValue(star)) ?? params.get('filename') ?? null;
  return { name, filename, type };
}

/**
 * Reads a multipart body: resolves with its text fields and spooled files, or rejects (413
 * past a limit, as soon as it is passed; 400 malformed; 499 the client left) having removed
 * every file it wrote. A repeated text field is a 400, except that `repeatable` names are
 * gathered as lines of one value (`remove_file`).
 */
export function readMultipart(
  req: IncomingMessage,
  boundary: string,
  limits: MultipartLimits,
  repeatable: ReadonlySet<string> = new Set(),
): Promise<Multipart> {
  const delimiter = Buffer.from(`\r\n--${boundary}`, 'latin1');
  const fields = emptyFields();
  const repeated = new Map<string, string[]>();
  const files: Upload[] = [];
  const writes: Promise<unknown>[] = [];
  let fieldBytes = 0;
  let fieldCount = 0;
  // The body starts with the first delimiter but its CRLF: pretend the CRLF came first.
  let buf: Buffer = Buffer.from('\r\n', 'latin1');
  let state: 'preamble' | 'afterDelimiter' | 'head' | 'body' | 'done' = 'preamble';
  let head: PartHead | null = null;
  let file: {
    out: WriteStream;
    hash: ReturnType<typeof createHash>;
    size: number;
    path: string;
    limit: { bytes: number; message: string };
  } | null = null;
  let text: Buffer[] = [];
  let settled = false;

  return new Promise<Multipart>((resolve, reject) => {
    const detach = (): void => {
      req.off('data', onData).off('end', onEnd).off('error', onClose).off('close', onClose);
    };
    const fail = (err: HttpError): void => {
      if (settled) return;
      settled = true;
      detach();
      req.pause();
      if (file !== null) {
        file.out.destroy();
        const closing = file.out;
        writes.push(new Promise<void>((r) => closing.once('close', () => r())));
        files.push({ name: '', type: '', size: 0, sha256: '', path: file.path });
        file = null;
      }
      // Every spooled file goes once its stream has closed: an aborted upload leaves none.
      void Promise.allSettled(writes)
        .then(() => discardUploads(files))
        .then(() => reject(err));
    };

    const startFile = (h: PartHead): void => {
      if (limits.refuseFiles !== undefined) throw limits.refuseFiles;
      if (files.length >= limits.maxFiles)
        throw bad(`A paste holds at most ${limits.maxFiles} files; this request sends more`);
      const path = join(limits.tmpDir, `upload-${randomBytes(12).toString('hex')}`);
      const out = createWriteStream(path, { flags: 'wx' });
      out.on('error', () => fail(new HttpError('internal', 'Could not spool an upload')));
      const limit = limits.fileLimit?.(fields) ?? {
        bytes: limits.maxFileBytes,
        message: `A file may hold at most ${limits.maxFileBytes} bytes (MAX_FILE_BYTES)`,
      };
      file = { out, hash: createHash('sha256'), size: 0, path, limit };
      void h;
    };

    const emit = (bytes: Buffer): void => {
      if (bytes.length === 0) return;
      if (file !== null) {
        file.size += bytes.length;
        if (file.size > file.limit.bytes) throw tooLarge(file.limit.message);
        file.hash.update(bytes);
        // Backpressure: the body waits while the disk catches up.
        if (!file.out.write(bytes)) {
          req.pause();
          // A stream ended before it drained (its part ended in the same chunk) never emits
          // 'drain': its 'finish' or 'close' resumes the body then.
          const out = file.out;
          const go = (): void => {
            out.off('drain', go).off('finish', go).off('close', go);
            if (!settled) req.resume();
          };
          out.once('drain', go).once('finish', go).once('close', go);
        }
        return;
      }
      fieldBytes += bytes.length;
      if (fieldBytes > limits.maxFieldBytes) throw tooLarge('The text fields of the form are too large');
      text.push(bytes);
    };

    const endPart = (): void => {
      const h = head as PartHead;
      if (file !== null) {
        const f = file;
        file = null;
        const done = new Promise<void>((res, rej) => {
          f.out.once('finish', res).once('error', rej);
        });
        f.out.end();
        writes.push(done);
        files.push({ name: h.filename ?? '', type: h.type, size: f.size, sha256: f.hash.digest('hex'), path: f.path });
        return;
      }
      let value: string;
      try {
        value = new TextDecoder('utf-8', { fatal: true }).decode(Buffer.concat(text));
      } catch {
        // A fatal TextDecoder throws TypeError exactly when the bytes are not UTF-8.
        throw bad(`The form field "${h.name.slice(0, 40)}" is not valid UTF-8`);
      }
      text = [];
      if (++fieldCount > MAX_FIELDS) throw bad(`The form has more than ${MAX_FIELDS} fields`);
      if (repeatable.has(h.name)) {
        const list = repeated.get(h.name) ?? [];
        list.push(value);
        repeated.set(h.name, list);
      } else if (Object.hasOwn(fields, h.name)) throw bad(`The form repeats the field "${h.name.slice(0, 40)}"`);
      else fields[h.name] = value;
    };

    /** Consumes what `buf` holds as far as it can; false when it needs more bytes. */
    const step = (): boolean => {
      if (state === 'preamble' || state === 'body') {
        const at = buf.indexOf(delimiter);
        if (at === -1) {
          // Keep a tail that may be the start of a delimiter; what comes before is the part's.
          const keep = Math.min(buf.length, delimiter.length - 1);
          if (state === 'body') emit(buf.subarray(0, buf.length - keep));
          buf = buf.subarray(buf.length - keep);
          return false;
        }
        if (state === 'body') {
          emit(buf.subarray(0, at));
          endPart();
        }
        buf = buf.subarray(at + delimiter.length);
        state = 'afterDelimiter';
        return true;
      }
      if (state === 'afterDelimiter') {
        if (buf.length < 2) return false;
        if (buf[0] === 0x2d && buf[1] === 0x2d) {
          state = 'done';
          return false;
        }
        // Transport padding (spaces, tabs) may follow a delimiter before its CRLF.
        const crlf = buf.indexOf('\r\n');
        if (crlf === -1) {
          if (buf.length > 256) throw bad('The multipart body is malformed');
          return false;
        }
        if (!/^[ \t]*$/.test(buf.subarray(0, crlf).toString('latin1'))) throw bad('The multipart body is malformed');
        buf = buf.subarray(crlf + 2);
        state = 'head';
        return true;
      }
      if (state === 'head') {
        const end = buf.indexOf('\r\n\r\n');
        if (end === -1) {
          if (buf.length > MAX_PART_HEADER_BYTES) throw bad('A multipart part header is too large');
          return false;
        }
        if (end > MAX_PART_HEADER_BYTES) throw bad('A multipart part header is too large');
        head = parseHead(buf.subarray(0, end));
        buf = buf.subarray(end + 4);
        if (head.filename !== null && head.name === limits.fileField) startFile(head);
        else if (head.filename !== null)
          throw bad(`Files are sent as parts named "${limits.fileField}", not "${head.name.slice(0, 40)}"`);
        // Else it would be a text field nobody reads, and the request refused for something else.
        else if (head.name === limits.fileField)
          throw bad(`A "${limits.fileField}" part needs a filename (curl: -F ${limits.fileField}=@path)`);
        state = 'body';
        return true;
      }
      return false;
    };

    const onData = (chunk: Buffer): void => {
      // After the final boundary comes an epilogue, which means nothing and is not kept.
      if (settled || state === 'done') return;
      // Only a tail shorter than the delimiter (or a header block being read) is ever joined.
      buf = buf.length === 0 ? chunk : Buffer.concat([buf, chunk]);
      try {
        while (step());
      } catch (err) {
        fail(err instanceof HttpError ? err : bad('The multipart body is malformed'));
      }
    };
    const onEnd = (): void => {
      if (settled) return;
      if (state !== 'done') {
        fail(bad('The multipart body ends before its final boundary'));
        return;
      }
      settled = true;
      detach();
      for (const [name, list] of repeated) fields[name] = list.join('\n');
      Promise.all(writes).then(
        () => resolve({ fields, files }),
        () => {
          void discardUploads(files).then(() => reject(new HttpError('internal', 'Could not spool an upload')));
        },
      );
    };
    // An upload cut short ends in 'error' (ECONNRESET) and 'close' with no 'end'.
    const onClose = (): void =>
      fail(new HttpError('client_closed', 'The client closed the connection before sending the whole body'));
    req.on('data', onData).on('end', onEnd).on('error', onClose).on('close', onClose);
  });
}
