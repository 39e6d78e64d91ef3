import { createHmac, timingSafeEqual } from 'node:crypto';

/** HMAC-SHA256 of `purpose` and `data` in base64url; the purpose keeps one use's MAC from passing as another's. */
export const sign = (key: Buffer, purpose: string, data: string): string =>
  createHmac('sha256', key).update(`${purpose}\0${data}`).digest('base64url');

/** Whether `mac` is the signature of `data` for `purpose`, in constant time. */
export function verify(key: Buffer, purpose: string, data: string, mac: string): boolean {
  const want = Buffer.from(sign(key, purpose, data));
  const got = Buffer.from(mac);
  return got.length === want.length && timingSafeEqual(got, want);
}
