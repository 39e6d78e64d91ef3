import type { IncomingMessage } from 'node:http';
import type { BodyBudget } from './body-budget.ts';
import { HttpError } from './errors.ts';
import { emptyFields, parseJsonObject, parseUrlEncoded, type Fields } from './fields.ts';

/** A body's encoding: JSON, a form, or plain text (the whole body is one field, `content`). */
export type BodyType = 'json' | 'form' | 'text';

/** The body type of a request from its Content-Type, or null for anything we don't accept. */
export function bodyType(req: IncomingMessage): BodyType | null {
  const raw = req.headers['content-type'];
  if (raw === undefined) return null;
  const [essence = '', ...params] = raw
    .toLowerCase()
    .split(';')
    .map((s) => s.trim());
  const charset = params
    .find((p) => p.startsWith('charset='))
    ?.slice(8)
    .replaceAll('"', '');
  if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') return null;
  if (essence === 'application/json') return 'json';
  if (essence === 'application/x-www-form-urlencoded') return 'form';
  if (essence === 'text/plain') return 'text';
  return null;
}

const tooLarge = (): HttpError => new HttpError('payload_too_large', 'Request body is too large');
const busy = (): HttpError =>
  new HttpError(
    'unavailable',
    'The server is reading too many unauthenticated bodies right now; try again shortly, or send the token in ' +
      'the Authorization header',
    {
      headers: { 'retry-after': '1' },
    },
  );
/** A client gone before its body arrived is not a server fault: no stack, logged as 499 (README, API request log). */
const gone = (): HttpError =>
  new HttpError('client_closed', 'The client closed the connection before sending the whole body');

/** Bodies at least this long whose length is declared are gathered into one buffer made up front. */
const GATHER_FROM = 16 * 1024;

/**
 * Reads the body as bytes, counting while it streams: past `limit` it answers 413 at once
 * instead of reading to the end. Decoding happens once, on the whole buffer, so multi-byte
 * characters split across chunks are never mangled. A large body of declared length is
 * copied into one buffer as it arrives, so it is never held twice (chunks, then their concat).
 * With a `budget` (bodies read before authentication), its bytes are taken from it (a
 * declared length at once, else as they arrive) and given back once the read settles; a
 * body that does not fit is refused with 503.
 */
export function readBody(req: IncomingMessage, limit: number, budget?: BodyBudget): Promise<Buffer> {
  const header = req.headers['content-length'];
  const declared = header === undefined ? -1 : Number(header);
  if (declared > limit) return Promise.reject(tooLarge());
  if (req.destroyed) return Promise.reject(gone());
  let taken = 0;
  if (budget !== undefined && declared >= 0) {
    if (!budget.take(declared)) return Promise.reject(busy());
    taken = declared;
  }
  return new Promise((resolve, reject) => {
    const whole = declared >= GATHER_FROM ? Buffer.allocUnsafe(declared) : null;
    const chunks: Buffer[] = [];
    let size = 0;
    const stop = (err: HttpError | null): void => {
      req.off('data', onData).off('end', onEnd).off('error', onClose).off('close', onClose);
      budget?.give(taken);
      if (err !== null) {
        req.pause();
        reject(err);
      } else if (whole !== null) resolve(whole.subarray(0, size));
      else resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size));
    };
    const onData = (chunk: Buffer): void => {
      if (size + chunk.length > (whole === null ? limit : whole.length)) {
        stop(tooLarge());
        return;
      }
      if (budget !== undefined && declared < 0) {
        if (!budget.take(chunk.length)) {
          stop(busy());
          return;
        }
        taken += chunk.length;
      }
      if (whole !== null) chunk.copy(whole, size);
      else chunks.push(chunk);
      size += chunk.length;
    };
    const onEnd = (): void => stop(null);
    // An upload cut short ends in 'error' (ECONNRESET) and 'close' with no 'end'.
    const onClose = (): void => stop(gone());
    req.on('data', onData).on('end', onEnd).on('error', onClose).on('close', onClose);
  });
}

/** Decodes a body of a known type into fields. Invalid UTF-8 is a 400, not U+FFFD soup. */
export function parseBody(type: BodyType, bytes: Buffer): Fields {
  let text: string;
  try {
    // A text body is the content byte for byte, a leading BOM too (README, Create a paste);
    // before JSON or a form, a BOM is no part of the fields and is dropped.
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: type === 'text' }).decode(bytes);
  } catch {
    // A fatal TextDecoder throws TypeError exactly when the bytes are not UTF-8.
    throw new HttpError('bad_request', 'Body is not valid UTF-8');
  }
  if (type === 'json') return parseJsonObject(text);
  if (type === 'text') {
    const fields = emptyFields();
    fields['content'] = text;
    return fields;
  }
  return parseUrlEncoded(text, 'form body');
}

/**
 * The largest body a maximal paste can need: every byte of the content percent-encoded (×3),
 * plus 64 KiB for the other fields. Anything longer is refused with 413 unread (README).
 */
export const maxBodyBytes = (maxPasteBytes: number): number => maxPasteBytes * 3 + 64 * 1024;

/** Reads and parses a body of a known type, up to `limit` bytes (from `budget`, when given). */
export async function readFields(
  req: IncomingMessage,
  type: BodyType,
  limit: number,
  budget?: BodyBudget,
): Promise<Fields> {
  return parseBody(type, await readBody(req, limit, budget));
}
