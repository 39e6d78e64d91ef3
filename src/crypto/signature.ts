import { createHmac, timingSafeEqual } from 'node:crypto';

/** HMAC-SHA256 of `purpose` and `data` in base64url; the purpose keeps one use's MAC from passing as another's. */
export const sign = (key: Buffer, purpose: string, data: string): string =>
  createHmac('sha256', key).update(`${purpose}\0${data}`).digest('base64url');

/**
 * Signs and checks with one key, keeping the signatures it checked lately. A browser sends
 * the same cookie on every request (an unlock grant, a visitor's CSRF token), and an HMAC
 * (most of it making the HMAC object) was a visible share of an unlocked page's CPU. Only
 * what the server would compute anyway is kept: the comparison with what the client sent
 * stays constant-time. Emptied whole when full. One is made at start, for the server key.
 */
export class Signer {
  readonly #key: Buffer;
  readonly #recent = new Map<string, string>();

  constructor(
    key: Buffer,
    readonly maxKept = 4_096,
  ) {
    this.#key = key;
  }

  /** How many signatures are kept now. */
  get kept(): number {
    return this.#recent.size;
  }

  /** The signature of `data` for `purpose` (see `sign`). */
  sign(purpose: string, data: string): string {
    return sign(this.#key, purpose, data);
  }

  /** Whether `mac` is the signature of `data` for `purpose`, in constant time. */
  verify(purpose: string, data: string, mac: string): boolean {
    const want = Buffer.from(this.#expected(purpose, data));
    const got = Buffer.from(mac);
    return got.length === want.length && timingSafeEqual(got, want);
  }

  #expected(purpose: string, data: string): string {
    const message = `${purpose}\0${data}`;
    let mac = this.#recent.get(message);
    if (mac === undefined) {
      if (this.#recent.size >= this.maxKept) this.#recent.clear();
      mac = sign(this.#key, purpose, data);
      this.#recent.set(message, mac);
    }
    return mac;
  }
}
