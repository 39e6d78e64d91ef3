import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

const IV_BYTES = 12;
const TAG_BYTES = 16;

const keyOf = (secret: string, context: string): Buffer =>
  Buffer.from(hkdfSync('sha256', secret, context, 'paste-sealed', 32));

/**
 * `text` encrypted (AES-256-GCM) under a key derived from `secret` and `context`: for a value
 * stored where only the holder of `secret` (a session's id, which storage never keeps) may
 * read it back. The result holds the IV and the tag before the ciphertext.
 */
export function seal(secret: string, context: string, text: string): Buffer {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', keyOf(secret, context), iv);
  const body = Buffer.concat([cipher.update(text, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]);
}

/** The text `seal` sealed with the same secret and context, or null for any other (or a damaged one). */
export function unseal(secret: string, context: string, sealed: Buffer): string | null {
  if (sealed.length < IV_BYTES + TAG_BYTES) return null;
  const decipher = createDecipheriv('aes-256-gcm', keyOf(secret, context), sealed.subarray(0, IV_BYTES));
  decipher.setAuthTag(sealed.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
  try {
    return Buffer.concat([decipher.update(sealed.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
  } catch (err) {
    // The tag does not match: another key or altered bytes, which open nothing.
    if (err instanceof Error && /authenticate/.test(err.message)) return null;
    throw err;
  }
}
