import type { AppDeps } from '../../deps.ts';
import { badRequest } from '../../http/errors.ts';
import type { Fields } from '../../http/fields.ts';
import { HASH_RE, shortcodeOf } from '../../paste/ids.ts';
import { formatTime, type Paste } from '../../paste/paste.ts';
import type { Problem } from '../../paste/validate.ts';
import { HttpError } from '../../http/errors.ts';

/** The `hash` parameter, refused with 400 unless it has the shape of a hash (CONTRACT §3). */
export function requireHash(...sources: Fields[]): string {
  for (const fields of sources) {
    const v = Object.hasOwn(fields, 'hash') ? fields['hash'] : undefined;
    if (v === undefined) continue;
    if (typeof v === 'string' && HASH_RE.test(v)) return v;
    throw badRequest('hash must be 10 letters or digits');
  }
  throw badRequest('hash is required');
}

export const pasteUrl = (deps: AppDeps, hash: string): string => `${deps.config.baseUrl}/p/${hash}`;
export const shortUrl = (deps: AppDeps, hash: string): string => `${deps.config.baseUrl}/s/${shortcodeOf(hash)}`;

/** The Paste object of SPEC §2.1 but for view_count. Password and highlight stay inside. */
function presentWithoutViews(deps: AppDeps, p: Paste): Record<string, unknown> {
  const owner = deps.accounts.user(p.owner_id);
  return {
    hash: p.hash,
    title: p.title,
    content: p.content,
    language: p.language,
    privacy: p.privacy,
    burn_after_read: p.burn_after_read,
    short_url: shortUrl(deps, p.hash),
    created_at: formatTime(p.created_at),
    expire_at: p.expire_at === null ? null : formatTime(p.expire_at),
    owner: { id: p.owner_id, display_name: owner?.name ?? 'unknown' },
  };
}

const BODY_HEAD = '{"ok":true,"paste":{"view_count":';

/**
 * The whole `paste.php` answer as bytes. Everything but the view count is rendered once per
 * stored paste object and kept beside it in the cache (an edit, burn or expiry makes a new
 * object, so nothing stale is reused); a read only splices in the count.
 */
export function pasteBody(deps: AppDeps, p: Paste, viewCount: number): [string, Buffer] {
  const tail = deps.store.render(p, 'api-paste', () => ownedBuffer(`,${JSON.stringify(presentWithoutViews(deps, p)).slice(1)}}`));
  return [BODY_HEAD + viewCount, tail];
}

/** Turns validation problems into one refusal: 413 if any is about size, else 400. */
export function refuse(problems: Problem[]): HttpError {
  const big = problems.find((p) => p.tooLarge);
  if (big !== undefined) return new HttpError('payload_too_large', big.message);
  return new HttpError('bad_request', problems.map((p) => p.message).join('; '));
}

/** Content this large is kept encoded beside the paste; below it, encoding is cheaper than the memory. */
export const RAW_RENDER_MIN_CHARS = 16 * 1024;

/** The raw.php body: the content as UTF-8, encoded once per stored object when it is large. */
export function rawBody(deps: AppDeps, p: Paste): Buffer | string {
  return p.content.length < RAW_RENDER_MIN_CHARS ? p.content : deps.store.render(p, 'raw', () => ownedBuffer(p.content));
}

/**
 * Bytes in memory of their own. Buffer.from() hands out small buffers as slices of a shared
 * 8 KiB slab, and a long-lived slice keeps its whole slab alive: cached renders held that
 * way cost several times their size.
 */
function ownedBuffer(text: string): Buffer {
  const buf = Buffer.allocUnsafeSlow(Buffer.byteLength(text));
  buf.write(text);
  return buf;
}
