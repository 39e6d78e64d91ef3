import type { Headers, Reply } from '../../http/reply.ts';
import { namesEtag } from '../../http/conditional.ts';
import { badRequest } from '../../http/errors.ts';
import { etagOf, type Paste } from '../../paste/paste.ts';
import type { Counted } from '../../paste/service.ts';
import { stringField, type ApiRequest } from '../request.ts';
import { extValue } from '../../http/disposition.ts';
import { filesOf } from '../../paste/files.ts';
import { grantedFileUrl, pasteBody, rawBody, requireHash } from './present.ts';

/**
 * The reader's password: the `password` query parameter, else the X-Paste-Password header.
 * Node hands header bytes over as latin1; a UTF-8 password is decoded back from them.
 */
export function password(r: ApiRequest): string | undefined {
  const q = stringField(r.query, 'password');
  if (q !== null) return q;
  const header = r.req.headers['x-paste-password'];
  if (typeof header !== 'string') return undefined;
  try {
    // ignoreBOM keeps a leading U+FEFF: it is part of the password, as in a JSON or form body.
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(Buffer.from(header, 'latin1'));
  } catch {
    // Not valid UTF-8: take the header as the latin1 text it was sent as.
    return header;
  }
}

/**
 * A read that counts (or, for HEAD, only checks); wrong passwords spend the client's budget.
 * A client that names the paste's revision in `If-None-Match` is answered 304 after every
 * other check, and nothing is counted or burned (README, Caching).
 */
export function readPaste(r: ApiRequest): Counted | Promise<Counted> {
  const hash = requireHash(r.query);
  const revision = revisionParam(r);
  if (revision !== null) {
    // An earlier version (README, Revisions): the same checks, nothing counted or burned.
    return r.deps.pastes.revision(hash, revision, r.viewer, {
      password: password(r),
      client: r.clientKey,
      consume: false,
    });
  }
  const held = r.req.headers['if-none-match'];
  const known = held === undefined ? undefined : (p: Paste): boolean => namesEtag(held, etagOf(p), false);
  const reader = { via: 'api' as const, tokenId: r.principal.anonymous === true ? null : r.principal.tokenId };
  return r.deps.pastes.read(hash, r.viewer, {
    password: password(r),
    client: r.clientKey,
    consume: r.req.method !== 'HEAD',
    known,
    reader,
  });
}

/** The `revision` parameter (README, Revisions): null when absent, 400 when not a whole number from 1. */
export function revisionParam(r: ApiRequest): number | null {
  const revision = stringField(r.query, 'revision');
  if (revision === null) return null;
  if (!/^[1-9]\d{0,8}$/.test(revision)) throw badRequest('revision must be a whole number from 1');
  return Number(revision);
}

/** The answer to a reader who holds this revision already. */
const notModified = (p: Paste): Reply => ({ kind: 'text', status: 304, body: '', headers: { etag: etagOf(p) } });

/** GET paste.php?hash= — the paste as JSON (README, Get a paste). */
export function getPaste(r: ApiRequest): Reply | Promise<Reply> {
  const read = readPaste(r);
  // A cached paste is answered without a promise (the read path's common case).
  return read instanceof Promise ? read.then((c) => pasteReply(r, c)) : pasteReply(r, read);
}

function pasteReply(r: ApiRequest, { paste, viewCount, unchanged, burnedAt }: Counted): Reply {
  if (unchanged === true) return notModified(paste);
  const { pieces, length } = pasteBody(r.deps, paste, viewCount, burnedAt);
  return secretSize(paste, {
    kind: 'bytes',
    status: 200,
    contentType: JSON_TYPE,
    body: pieces,
    length,
    headers: { etag: etagOf(paste) },
  });
}

/** A HEAD of a one-time paste, which burns nothing, does not give away its size either (README, Get a paste). */
function secretSize(paste: Paste, reply: Reply & { kind: 'text' | 'bytes' }): Reply {
  if (paste.burn_after_read === 1) reply.secretLength = true;
  return reply;
}

/** GET raw.php?hash= — the content alone as text/plain (README, Raw text). */
export function rawPaste(r: ApiRequest): Reply | Promise<Reply> {
  const read = readPaste(r);
  return read instanceof Promise ? read.then((c) => rawReply(r, c)) : rawReply(r, read);
}

function rawReply(r: ApiRequest, { paste, unchanged, burnedAt }: Counted): Reply {
  if (unchanged === true) return notModified(paste);
  const body = rawBody(r.deps, paste);
  // A user's text: a browser that opens it directly must run nothing of it, and never as a
  // page of ours. A literal, not a spread of a shared object: spread on every read, these
  // objects were promoted out of the young generation by the thousand (bench/README.md).
  const headers: Headers = { 'content-security-policy': 'sandbox', etag: etagOf(paste) };
  if (burnedAt !== undefined && filesOf(paste).length > 0) headers['link'] = grantLinks(r, paste, burnedAt);
  return secretSize(
    paste,
    typeof body === 'string'
      ? { kind: 'text', status: 200, body, headers }
      : { kind: 'bytes', status: 200, contentType: 'text/plain; charset=utf-8', body, headers },
  );
}

/**
 * The files of a paste raw.php burned, as RFC 8288 links (`rel="enclosure"`, the name as
 * `title*`), each to its one fetch: the text alone has no room for them.
 */
const grantLinks = (r: ApiRequest, p: Paste, burnedAt: number): string =>
  filesOf(p)
    .map((f) => `<${grantedFileUrl(r.deps, p.hash, burnedAt, f)}>; rel="enclosure"; title*=UTF-8''${extValue(f.name)}`)
    .join(', ');

const JSON_TYPE = 'application/json; charset=utf-8';
