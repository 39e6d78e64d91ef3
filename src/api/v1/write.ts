import { json, type Reply } from '../../http/reply.ts';
import { validateCreate, validateEdit } from '../../paste/validate.ts';
import type { ApiContext } from '../pipeline.ts';
import { pasteUrl, refuse, requireHash, shortUrl } from './present.ts';

/** POST paste_create.php (SPEC §4.3). */
export async function createPaste(ctx: ApiContext): Promise<Reply> {
  const v = validateCreate(ctx.body, ctx.deps.config.maxPasteBytes);
  if (!v.ok) throw refuse(v.problems);
  const paste = await ctx.deps.pastes.create(v.value, ctx.principal.userId);
  return json({ ok: true, hash: paste.hash, url: pasteUrl(ctx.deps, paste.hash), short_url: shortUrl(ctx.deps, paste.hash) });
}

/** POST paste_edit.php (SPEC §4.4). */
export async function editPaste(ctx: ApiContext): Promise<Reply> {
  const hash = requireHash(ctx.body, ctx.query);
  const v = validateEdit(ctx.body, ctx.deps.config.maxPasteBytes);
  if (!v.ok) throw refuse(v.problems);
  const paste = await ctx.deps.pastes.edit(hash, v.value, ctx.viewer);
  return json({ ok: true, hash: paste.hash, url: pasteUrl(ctx.deps, paste.hash), short_url: shortUrl(ctx.deps, paste.hash) });
}

/** POST paste_delete.php (SPEC §4.5). */
export async function deletePaste(ctx: ApiContext): Promise<Reply> {
  const hash = requireHash(ctx.body, ctx.query);
  await ctx.deps.pastes.delete(hash, ctx.viewer);
  return json({ ok: true, deleted: true });
}
