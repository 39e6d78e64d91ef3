import { HttpError } from '../../http/errors.ts';
import { text, type Reply } from '../../http/reply.ts';
import type { Paste } from '../../paste/paste.ts';
import type { ApiContext } from '../pipeline.ts';
import { stringField } from '../pipeline.ts';
import { pasteBody, rawBody, requireHash } from './present.ts';

/** Wrong paste passwords allowed per client and paste per minute, however generous the token. */
export const PASSWORD_GUESSES_PER_MINUTE = 10;

/**
 * The reader's password: the `password` query parameter, else the X-Paste-Password header.
 * Node hands header bytes over as latin1; a UTF-8 password is decoded back from them.
 */
function password(ctx: ApiContext): string | undefined {
  const q = stringField(ctx.query, 'password');
  if (q !== null) return q;
  const header = ctx.req.headers['x-paste-password'];
  if (typeof header !== 'string') return undefined;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(header, 'latin1'));
  } catch {
    // Not valid UTF-8: take the header as the latin1 text it was sent as.
    return header;
  }
}

/** The rate-limit bucket of one client's password guesses at one paste. */
const guessKey = (ctx: ApiContext, hash: string): string => `pwfail:${ctx.ip}:${hash}`;

/** A read that counts (or, for HEAD, only checks), with wrong passwords rate-limited. */
async function readPaste(ctx: ApiContext): Promise<{ paste: Paste; viewCount: number }> {
  const { pastes, limiter } = ctx.deps;
  const hash = requireHash(ctx.query);
  // Once this client has spent its guesses on this paste, it may not try another password
  // until the budget refills (404 and 410 still answer first, as for any read). A paste
  // known to have no password has no budget to look at: the common read skips the lookup.
  if (ctx.deps.store.cached(hash)?.password !== null) {
    const budget = limiter.peek(guessKey(ctx, hash), PASSWORD_GUESSES_PER_MINUTE);
    if (!budget.allowed && pastes.needsPassword(await pastes.peek(hash, ctx.viewer), ctx.viewer)) {
      throw new HttpError('rate_limited', 'Too many wrong passwords for this paste; try again later', {
        body: { limit_per_minute: PASSWORD_GUESSES_PER_MINUTE },
        headers: { 'retry-after': String(budget.retryAfterSec) },
      });
    }
  }
  try {
    return await pastes.readCounted(hash, ctx.viewer, password(ctx), ctx.req.method !== 'HEAD');
  } catch (err) {
    if (err instanceof HttpError && err.code === 'invalid_password') limiter.consume(guessKey(ctx, hash), PASSWORD_GUESSES_PER_MINUTE);
    throw err;
  }
}

/** GET paste.php?hash= — the paste as JSON (SPEC §4.1). */
export async function getPaste(ctx: ApiContext): Promise<Reply> {
  const { paste, viewCount } = await readPaste(ctx);
  return { kind: 'bytes', status: 200, contentType: JSON_TYPE, body: pasteBody(ctx.deps, paste, viewCount) };
}

/** GET raw.php?hash= — the content alone as text/plain (SPEC §4.2). */
export async function rawPaste(ctx: ApiContext): Promise<Reply> {
  const body = rawBody(ctx.deps, (await readPaste(ctx)).paste);
  return typeof body === 'string' ? text(body) : { kind: 'bytes', status: 200, contentType: 'text/plain; charset=utf-8', body };
}

const JSON_TYPE = 'application/json; charset=utf-8';
