import type { RouteDef } from '../http/router.ts';
import { emptyFields } from '../http/fields.ts';
import { json, type Reply } from '../http/reply.ts';
import { PasteError } from '../paste/errors.ts';
import { contentOf, etagOf, HASH_RE } from '../paste/paste.ts';
import type { Counted } from '../paste/service.ts';
import type { ApiRequest, ApiRoute } from './request.ts';
import { readPaste } from './v1/read.ts';
import { makePaste } from './v1/write.ts';

/**
 * hastebin's API (haste-server's lib/document_handler.js), so its clients and ShareX work
 * unchanged (README, hastebin clients): `POST /documents` with the text as the body answers
 * `{"key"}`, `GET /documents/<key>` answers `{"key","data"}`, `GET /raw/<key>` the text.
 * A key may carry an extension (`<key>.js`), as hastebin's links do. These run through the
 * API's steps: a bearer token is honoured, and without one a create is an anonymous paste
 * (refused when ANONYMOUS_PASTES is off) and a read sees what the paste's web page shows.
 * Errors are hastebin's shape, `{"message"}` (api/side.ts).
 */

/** Whether a path is one of hastebin's, which the API side answers (app.ts). */
export const isHastePath = (path: string): boolean =>
  path === '/documents' || path.startsWith('/documents/') || path.startsWith('/raw/');

/** The hash a hastebin key names: the key up to its first dot, as haste-server reads it; null when malformed. */
export function hashOfKey(key: string): string | null {
  const dot = key.indexOf('.');
  const hash = dot === -1 ? key : key.slice(0, dot);
  return HASH_RE.test(hash) && /^(?:\.[A-Za-z0-9]{1,16})?$/.test(key.slice(hash.length)) ? hash : null;
}

/** POST /documents */
async function createDocument(r: ApiRequest): Promise<Reply> {
  const { hash, deleteUrl } = await makePaste(r);
  return json(deleteUrl === undefined ? { key: hash } : { key: hash, delete_url: deleteUrl });
}

/** A read of the paste the `:key` names, with the query's password if any; a malformed key is no paste. */
function readKey(r: ApiRequest): Counted | Promise<Counted> {
  const hash = hashOfKey(r.params['key'] ?? '');
  if (hash === null) throw new PasteError('not_found');
  const query = emptyFields();
  for (const [k, v] of Object.entries(r.query)) query[k] = v;
  query['hash'] = hash;
  return readPaste({ ...r, query });
}

const notModified = (c: Counted): Reply => ({
  kind: 'text',
  status: 304,
  body: '',
  headers: { etag: etagOf(c.paste) },
});

/** GET /documents/:key */
async function getDocument(r: ApiRequest): Promise<Reply> {
  const c = await readKey(r);
  if (c.unchanged === true) return notModified(c);
  return json({ key: c.paste.hash, data: contentOf(c.paste) }, 200, { etag: etagOf(c.paste) });
}

/** GET /raw/:key: the text alone, run as nothing by a browser that opens it (as raw.php). */
async function getRaw(r: ApiRequest): Promise<Reply> {
  const c = await readKey(r);
  if (c.unchanged === true) return notModified(c);
  const headers = { 'content-security-policy': 'sandbox', etag: etagOf(c.paste) };
  return { kind: 'text', status: 200, body: contentOf(c.paste), headers };
}

export const hasteRoutes: RouteDef<ApiRoute>[] = [
  {
    method: 'POST',
    path: '/documents',
    data: { scope: 'write', raw: true, anonymous: 'create', handler: createDocument },
  },
  { method: 'GET', path: '/documents/:key', data: { scope: 'read', anonymous: 'read', handler: getDocument } },
  { method: 'GET', path: '/raw/:key', data: { scope: 'read', anonymous: 'read', handler: getRaw } },
];
