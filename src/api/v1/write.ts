import { prefersPlainText } from '../../http/accept.ts';
import { json, type Reply } from '../../http/reply.ts';
import { validateCreate, validateEdit } from '../../paste/validate.ts';
import type { ApiRequest } from '../request.ts';
import { pasteUrl, refuse, requireHash, shortUrl } from './present.ts';

/**
 * POST paste_create.php (README, Create a paste). A client that asks for text (`Accept:
 * text/plain`, a shell piping into curl) gets the paste's URL and a newline.
 */
export async function createPaste(r: ApiRequest): Promise<Reply> {
  const v = validateCreate(r.body, r.deps.maxPasteBytes);
  if (!v.ok) throw refuse(v.problems);
  const paste = await r.deps.pastes.create(v.value, r.principal.userId);
  const url = pasteUrl(r.deps, paste.hash);
  if (prefersPlainText(r.req.headers.accept)) return { kind: 'text', status: 200, body: `${url}\n` };
  return json({ ok: true, hash: paste.hash, url, short_url: shortUrl(r.deps, paste.hash) });
}

/** POST paste_edit.php (README, Edit a paste). */
export async function editPaste(r: ApiRequest): Promise<Reply> {
  const hash = requireHash(r.body, r.query);
  const v = validateEdit(r.body, r.deps.maxPasteBytes);
  if (!v.ok) throw refuse(v.problems);
  const paste = await r.deps.pastes.edit(hash, v.value, r.viewer);
  return json({ ok: true, hash: paste.hash, url: pasteUrl(r.deps, paste.hash), short_url: shortUrl(r.deps, paste.hash) });
}

/** POST paste_delete.php (README, Delete a paste). */
export async function deletePaste(r: ApiRequest): Promise<Reply> {
  const hash = requireHash(r.body, r.query);
  await r.deps.pastes.delete(hash, r.viewer);
  return json({ ok: true, deleted: true });
}
