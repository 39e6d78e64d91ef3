import { createHmac, timingSafeEqual } from 'node:crypto';

/** HMAC-SHA256 of `purpose` and `data` in base64url; the purpose keeps one use's MAC from passing as another's. */
export const sign = (key: Buffer, purpose: string, data: string): string =>
  createHmac('sha256', key).update(`${purpose}\0${data}`).digest('base64url');

/**
 * The signatures `verify` computed lately, by key and signed message. A browser sends the
 * same cookie on every request (an unlock grant, a visitor's CSRF token), and an HMAC
 * (most of it making the HMAC object) was a visible share of an unlocked page's CPU. Only
 * what the server would compute anyway is kept: the comparison with what the client sent
 * stays constant-time. Emptied whole when full.
 */
const recent = new WeakMap<Buffer, Map<string, string>>();
const RECENT_MAX = 4_096;

function expected(key: Buffer, purpose: string, data: string): string {
  let byMessage = recent.get(key);
  if (byMessage === undefined) recent.set(key, (byMessage = new Map()));
  const message = `${purpose}\0${data}`;
  let mac = byMessage.get(message);
  if (mac === undefined) {
    if (byMessage.size >= RECENT_MAX) byMessage.clear();
    mac = sign(key, purpose, data);
    byMessage.set(message, mac);
  }
  return mac;
}

/** Whether `mac` is the signature of `data` for `purpose`, in constant time. */
export function verify(key: Buffer, purpose: string, data: string, mac: string): boolean {
  const want = Buffer.from(expected(key, purpose, data));
  const got = Buffer.from(mac);
  return got.length === want.length && timingSafeEqual(got, want);
}
