import type { IncomingMessage } from 'node:http';
import { HttpError } from './errors.ts';
import { parseJsonObject, parseUrlEncoded, type Fields } from './fields.ts';

export type BodyType = 'json' | 'form';

/** The body type of a request from its Content-Type, or null for anything we don't accept. */
export function bodyType(req: IncomingMessage): BodyType | null {
  const raw = req.headers['content-type'];
  if (raw === undefined) return null;
  const [essence = '', ...params] = raw.toLowerCase().split(';').map((s) => s.trim());
  const charset = params.find((p) => p.startsWith('charset='))?.slice(8).replaceAll('"', '');
  if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') return null;
  if (essence === 'application/json') return 'json';
  if (essence === 'application/x-www-form-urlencoded') return 'form';
  return null;
}

const tooLarge = (): HttpError => new HttpError('payload_too_large', 'Request body is too large');

/**
 * Reads the body as bytes, counting while it streams: past `limit` it answers 413 at once
 * instead of reading to the end. Decoding happens once, on the whole buffer, so multi-byte
 * characters split across chunks are never mangled.
 */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) return Promise.reject(tooLarge());
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limit) {
        cleanup();
        req.pause();
        reject(tooLarge());
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => {
      cleanup();
      resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size));
    };
    const onError = (err: Error): void => {
      cleanup();
      reject(err);
    };
    const cleanup = (): void => {
      req.off('data', onData).off('end', onEnd).off('error', onError);
    };
    req.on('data', onData).on('end', onEnd).on('error', onError);
  });
}

/** Decodes a body of a known type into fields. Invalid UTF-8 is a 400, not U+FFFD soup. */
export function parseBody(type: BodyType, bytes: Buffer): Fields {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    // A fatal TextDecoder throws TypeError exactly when the bytes are not UTF-8.
    throw new HttpError('bad_request', 'Body is not valid UTF-8');
  }
  if (type === 'json') return parseJsonObject(text);
  return parseUrlEncoded(text, 'form body');
}

/**
 * The largest body a maximal paste can need: every byte of the content percent-encoded (×3),
 * plus 64 KiB for the other fields. Anything longer is refused with 413 unread (README).
 */
export const maxBodyBytes = (maxPasteBytes: number): number => maxPasteBytes * 3 + 64 * 1024;

/** Reads and parses a body of a known type, up to `limit` bytes. */
export async function readFields(req: IncomingMessage, type: BodyType, limit: number): Promise<Fields> {
  return parseBody(type, await readBody(req, limit));
}
