import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/** A client's own request id is kept when it is a plain token: no spaces, quotes or controls, and short. */
const SANE = /^[A-Za-z0-9._:-]{1,64}$/;

/**
 * Request ids (README, Request ids): the `X-Request-Id` a client sent, when sane, else one
 * made here: a random prefix per server, so ids from different runs never meet, and a
 * counter, so making one costs next to nothing. Every answer carries it, and the API log
 * line and the server's report of a fault name it.
 */
export class RequestIds {
  readonly #prefix = `${randomBytes(6).toString('base64url')}-`;
  #count = 0;

  of(req: IncomingMessage): string {
    const sent = req.headers['x-request-id'];
    if (typeof sent === 'string' && SANE.test(sent)) return sent;
    return this.#prefix + (++this.#count).toString(36);
  }
}
