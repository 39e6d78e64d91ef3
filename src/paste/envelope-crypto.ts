import {
  ENVELOPE_ALG,
  ENVELOPE_KDF,
  ENVELOPE_VERSION,
  type Envelope,
  fromBase64url,
  IV_BYTES,
  KEY_BYTES,
  MAX_FILE_HEAD_BYTES,
  PBKDF2_ITERATIONS,
  readEnvelope,
  SALT_BYTES,
  toBase64url,
} from './envelope.ts';

/**
 * Encrypting a paste into its envelope (envelope.ts) and back, with WebCrypto only, so the
 * browser (web/client/) and Node run the same code. The server never calls these: it
 * never holds a key. The key is 32 random bytes, carried as base64url in the link's
 * fragment; with a password, the AES key is PBKDF2-HMAC-SHA-256 of the link key's bytes
 * followed by the password's UTF-8, so both are needed.
 */

/** Why an envelope could not be opened: not one (`shape`), an unknown `version`, or the wrong key or password. */
export class EnvelopeRefused extends Error {
  constructor(
    readonly kind: 'shape' | 'version' | 'key',
    message: string,
  ) {
    super(message);
  }
}

const KEY_RE = /^[A-Za-z0-9_-]{43}$/;

/** Whether `s` has the shape of a link key: 32 bytes of base64url. */
export const isKey = (s: string): boolean => KEY_RE.test(s);

const subtle = (): SubtleCrypto => globalThis.crypto.subtle;
type SubtleCrypto = typeof globalThis.crypto.subtle;
type CryptoKey = Awaited<ReturnType<SubtleCrypto['importKey']>>;

const random = (n: number): Uint8Array => globalThis.crypto.getRandomValues(new Uint8Array(n));

/** A new random link key. */
export const newKey = (): string => toBase64url(random(KEY_BYTES));

/** The AES key for the link key `key` (and the password, with its salt and count). */
async function aesKey(key: string, pw?: { password: string; salt: Uint8Array; iter: number }): Promise<CryptoKey> {
  if (!isKey(key)) throw new EnvelopeRefused('key', 'the key must be 32 bytes of base64url');
  const bytes = fromBase64url(key);
  if (pw === undefined) return subtle().importKey('raw', bytes, 'AES-GCM', false, ['encrypt', 'decrypt']);
  const secret = new Uint8Array([...bytes, ...new TextEncoder().encode(pw.password)]);
  const base = await subtle().importKey('raw', secret, 'PBKDF2', false, ['deriveKey']);
  return subtle().deriveKey(
    { name: 'PBKDF2', salt: pw.salt, iterations: pw.iter, hash: 'SHA-256' },
    base,
    { name: 'AES-GCM', length: 256 },
    false,
    ['encrypt', 'decrypt'],
  );
}

/**
 * `text` encrypted under the link key `key` (and `password`, when not empty) as an
 * envelope's JSON text. `iterations` is PBKDF2's count, PBKDF2_ITERATIONS unless given.
 */
export const encryptText = (
  text: string,
  key: string,
  opts: { password?: string; iterations?: number } = {},
): Promise<string> => encryptBytes(new TextEncoder().encode(text), key, opts);

/** Bytes encrypted as `encryptText` encrypts text: the same envelope, whatever the bytes are. */
export async function encryptBytes(
  bytes: Uint8Array,
  key: string,
  opts: { password?: string; iterations?: number } = {},
): Promise<string> {
  const iv = random(IV_BYTES);
  const withPassword = opts.password !== undefined && opts.password !== '';
  const salt = random(SALT_BYTES);
  const iter = opts.iterations ?? PBKDF2_ITERATIONS;
  const aes = await aesKey(key, withPassword ? { password: opts.password as string, salt, iter } : undefined);
  const ct = new Uint8Array(await subtle().encrypt({ name: 'AES-GCM', iv }, aes, bytes));
  const envelope: Envelope = { v: ENVELOPE_VERSION, alg: ENVELOPE_ALG, iv: toBase64url(iv), ct: toBase64url(ct) };
  if (withPassword) Object.assign(envelope, { kdf: ENVELOPE_KDF, iter, salt: toBase64url(salt) });
  return JSON.stringify(envelope);
}

/** The envelope in `text`, refused when it is none or of a version this code does not know. */
export function openEnvelope(text: string): Envelope {
  const e = readEnvelope(text);
  if (typeof e !== 'string') return e;
  // The version is checked first: a newer client's envelope says so rather than "malformed".
  let version: unknown;
  try {
    version = (JSON.parse(text) as { v?: unknown }).v;
  } catch {
    version = undefined;
  }
  if (version !== undefined && version !== ENVELOPE_VERSION)
    throw new EnvelopeRefused('version', `this envelope is of version ${String(version)}, which this code cannot read`);
  throw new EnvelopeRefused('shape', e);
}

/** Whether opening `envelope` needs a password as well as the link key. */
export const needsPassword = (envelope: Envelope): boolean => envelope.kdf !== undefined;

/**
 * The text of an envelope, with the link key (and the password, if it was made with one).
 * A wrong key or password, or a changed byte anywhere (GCM's tag), is refused as `key`.
 */
export async function decryptEnvelope(text: string, key: string, password = ''): Promise<string> {
  const plain = await decryptBytes(text, key, password);
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(plain);
  } catch {
    // TypeError: authentic bytes that are not UTF-8, which only a foreign client makes.
    throw new EnvelopeRefused('shape', 'the decrypted content is not UTF-8 text');
  }
}

/** The bytes of an envelope, refused as `decryptEnvelope` refuses. */
export async function decryptBytes(text: string, key: string, password = ''): Promise<Uint8Array> {
  const e = openEnvelope(text);
  const pw =
    e.kdf === undefined ? undefined : { password, salt: fromBase64url(e.salt as string), iter: e.iter as number };
  const aes = await aesKey(key, pw);
  try {
    return new Uint8Array(
      await subtle().decrypt({ name: 'AES-GCM', iv: fromBase64url(e.iv) }, aes, fromBase64url(e.ct)),
    );
  } catch {
    // WebCrypto's only refusal here is OperationError: the tag does not match.
    throw new EnvelopeRefused('key', 'the key or the password is wrong, or the envelope was changed');
  }
}

/** What an encrypted paste's file holds besides its bytes: the server sees none of it. */
export interface SealedFileHead {
  name: string;
  type: string;
  size: number;
}

/** A type longer than this is sealed as `application/octet-stream`: it is no media type a reader knows. */
const MAX_SEALED_TYPE_CHARS = 127;

/**
 * A file of an encrypted paste as its envelope: the plaintext is the JSON of its name, type
 * and size, a newline, then its bytes (docs/encrypted-pastes.md, Files). A head past
 * MAX_FILE_HEAD_BYTES is refused (`shape`): the server's limit counts on that bound.
 */
export async function sealFile(
  head: SealedFileHead,
  bytes: Uint8Array,
  key: string,
  opts: { password?: string; iterations?: number } = {},
): Promise<string> {
  const type = head.type.length <= MAX_SEALED_TYPE_CHARS ? head.type : 'application/octet-stream';
  const top = new TextEncoder().encode(`${JSON.stringify({ name: head.name, type, size: bytes.length })}\n`);
  if (top.length > MAX_FILE_HEAD_BYTES)
    throw new EnvelopeRefused('shape', `the file's name and type take more than ${MAX_FILE_HEAD_BYTES} bytes`);
  const plain = new Uint8Array(top.length + bytes.length);
  plain.set(top);
  plain.set(bytes, top.length);
  return encryptBytes(plain, key, opts);
}

/** The name, type and bytes a file's envelope holds; refused as `decryptEnvelope` refuses, or as `shape`. */
export async function openFile(
  text: string,
  key: string,
  password = '',
): Promise<SealedFileHead & { bytes: Uint8Array }> {
  const plain = await decryptBytes(text, key, password);
  const nl = plain.indexOf(0x0a);
  let head: unknown;
  try {
    head = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(plain.subarray(0, nl)));
  } catch {
    head = null;
  }
  const h = head as Partial<SealedFileHead> | null;
  const bytes = plain.subarray(nl + 1);
  if (nl < 0 || typeof h?.name !== 'string' || typeof h.type !== 'string' || h.size !== bytes.length)
    throw new EnvelopeRefused('shape', 'the decrypted file does not begin with its name, type and size');
  return { name: h.name, type: h.type, size: h.size, bytes };
}
