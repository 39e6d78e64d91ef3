import type { IncomingMessage, ServerResponse } from 'node:http';
import { pipeline } from 'node:stream/promises';
import { lingerBeforeClose } from './linger.ts';
import type { Headers, Reply } from './reply.ts';
import { encodingOf } from './text-bytes.ts';

const CONTENT_TYPE = {
  json: 'application/json; charset=utf-8',
  text: 'text/plain; charset=utf-8',
  html: 'text/html; charset=utf-8',
} as const;

/**
 * Whether the request carries a body not yet read to its end. `complete` alone will not do:
 * a request without a body is only marked complete after a listener that answers at once
 * (healthz, static files) has run, and closing those would cost every keep-alive client.
 */
function bodyUnread(req: IncomingMessage): boolean {
  if (req.complete) return false;
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

const NO_COOKIES: readonly string[] = [];

/**
 * The only code that writes a response. `extra` headers (rate limits, security) go first; a
 * header the reply sets itself replaces the `extra` one of that name. `cookies` (the
 * request's, e.g. a session's renewal) go out before any the reply sets itself.
 * Content-Type, Content-Length, Location and Connection are respond's own: replies do not
 * set them.
 */
export function respond(
  res: ServerResponse,
  reply: Reply,
  extra?: Headers,
  cookies: readonly string[] = NO_COOKIES,
): void {
  if (res.headersSent) return;
  // Name, value, name, value...: Node writes a flat list as it is, where an object would
  // first have to be built (a spread of both) and then walked key by key.
  const head: (string | string[])[] = [];
  const own = reply.headers;
  if (extra !== undefined) {
    for (const name in extra)
      if (own === undefined || !Object.hasOwn(own, name)) head.push(name, extra[name] as string | string[]);
  }
  if (own !== undefined) {
    for (const name in own)
      if (cookies.length === 0 || name !== 'set-cookie') head.push(name, own[name] as string | string[]);
  }
  if (cookies.length > 0) {
    const mine = own?.['set-cookie'];
    head.push('set-cookie', mine === undefined ? cookies.slice() : cookies.concat(mine));
  }
  if (reply.kind === 'stream') {
    head.push('content-type', reply.contentType, 'content-length', String(reply.length));
    res.writeHead(reply.status, head);
    if (res.req.method === 'HEAD') res.end();
    // A store that fails midway cuts the answer short: the client sees fewer bytes than announced.
    else pipeline(reply.open(), res).catch(() => res.destroy());
    return;
  }
  let body: string | Buffer | readonly (Buffer | string)[];
  if (reply.kind === 'redirect') {
    head.push('location', reply.location);
    body = '';
  } else if (reply.kind === 'bytes') {
    head.push('content-type', reply.contentType);
    body = reply.body;
  } else {
    head.push('content-type', CONTENT_TYPE[reply.kind]);
    body = reply.kind === 'json' ? JSON.stringify(reply.body) : reply.body;
  }
  // Answering before the request body has arrived (401, 413, 415...): close rather than
  // read the rest of it, however large, just to keep the connection alive (README, API: 413).
  if (bodyUnread(res.req)) {
    head.push('connection', 'close');
    lingerBeforeClose(res.req.socket);
  }
  // 204 and 304 carry no body (RFC 9110 §15.3.5, §15.4.5), so no Content-Length either.
  const bodiless = reply.status === 204 || reply.status === 304;
  const pieces = typeof body === 'string' || Buffer.isBuffer(body) ? [body] : body;
  const isHead = res.req.method === 'HEAD';
  const length = reply.kind === 'bytes' && reply.length !== undefined ? reply.length : byteLength(pieces);
  if (!bodiless && !(isHead && (reply.kind === 'text' || reply.kind === 'bytes') && reply.secretLength === true)) {
    head.push('content-length', String(length));
  }
  res.writeHead(reply.status, head);
  if (isHead || bodiless) res.end();
  else if (pieces.length === 1) endWith(res, pieces[0] as string | Buffer, length);
  else if (pieces.every((p) => typeof p === 'string')) {
    // Joined with +, strings are only linked, not copied: the one copy is made as they are
    // written, together with the head (Content-Length was summed piece by piece, so no
    // joined string had to be flattened to measure it).
    let all = '';
    for (const piece of pieces) all += piece as string;
    res.end(all, encodingOf(all, length));
  } else {
    // Corked, the head and every piece leave in one writev.
    res.cork();
    for (const piece of pieces) {
      if (typeof piece === 'string') res.write(piece, encodingOf(piece));
      else res.write(piece);
    }
    res.end();
  }
}

/** Ends the answer with its one piece of body, `bytes` long: ASCII text written as Latin-1 (http/text-bytes.ts). */
function endWith(res: ServerResponse, piece: string | Buffer, bytes: number): void {
  if (typeof piece === 'string') res.end(piece, encodingOf(piece, bytes));
  else res.end(piece);
}

function byteLength(pieces: readonly (Buffer | string)[]): number {
  let n = 0;
  for (const p of pieces) n += Buffer.byteLength(p);
  return n;
}
