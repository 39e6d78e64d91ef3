import { json, text, type Reply } from '../../http/reply.ts';
import type { ApiContext } from '../pipeline.ts';
import { stringField } from '../pipeline.ts';
import { presentPaste, requireHash } from './present.ts';

function password(ctx: ApiContext): string | undefined {
  const header = ctx.req.headers['x-paste-password'];
  return stringField(ctx.query, 'password') ?? (typeof header === 'string' ? header : undefined);
}

/** GET paste.php?hash= — the paste as JSON (SPEC §4.1). */
export async function getPaste(ctx: ApiContext): Promise<Reply> {
  const hash = requireHash(ctx.query);
  const paste = await ctx.deps.pastes.read(hash, ctx.viewer, password(ctx));
  return json({ ok: true, paste: presentPaste(ctx.deps, paste) });
}

/** GET raw.php?hash= — the content alone as text/plain (SPEC §4.2). */
export async function rawPaste(ctx: ApiContext): Promise<Reply> {
  const hash = requireHash(ctx.query);
  const paste = await ctx.deps.pastes.read(hash, ctx.viewer, password(ctx));
  return text(paste.content);
}
