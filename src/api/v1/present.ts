import type { AppDeps } from '../../deps.ts';
import { badRequest } from '../../http/errors.ts';
import type { Fields } from '../../http/fields.ts';
import { HASH_RE, shortcodeOf } from '../../paste/ids.ts';
import { formatTime, type Paste } from '../../paste/paste.ts';
import type { Problem } from '../../paste/validate.ts';
import { contentJson } from '../../store/paste-cache.ts';
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

/** The Paste object of SPEC §2.1 but for view_count and content. Password and highlight stay inside. */
function presentFields(deps: AppDeps, p: Paste): Record<string, unknown> {
  const owner = deps.accounts.user(p.owner_id);
  return {
    hash: p.hash,
    title: p.title,
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
 * The whole `paste.php` answer, in pieces. The paste's other fields are rendered once per
 * stored paste object and kept beside it in the cache (an edit, burn or expiry makes a new
 * object, so nothing stale is reused); a read splices in the view count and the content,
 * which a cached paste already holds as JSON. Long content is also kept as bytes, so a
 * large answer is not encoded again on every read.
 */
export function pasteBody(deps: AppDeps, p: Paste, viewCount: number): [string, string | Buffer, string] {
  const fields = deps.store.render(p, 'api-fields', () => `,${JSON.stringify(presentFields(deps, p)).slice(1, -1)},"content":`);
  const head = BODY_HEAD + viewCount + fields;
  const content = contentJson(p);
  if (content.length < RENDER_MIN_CHARS) return [head, content, '}}'];
  return [head, deps.store.render(p, 'api-content', () => Buffer.from(content)), '}}'];
}

/** Turns validation problems into one refusal: 413 if any is about size, else 400. */
export function refuse(problems: Problem[]): HttpError {
  const big = problems.find((p) => p.tooLarge);
  if (big !== undefined) return new HttpError('payload_too_large', big.message);
  return new HttpError('bad_request', problems.map((p) => p.message).join('; '));
}

/**
 * Content this long is kept encoded beside the paste; shorter, encoding it per answer is
 * cheaper than the memory. (Buffers this large are never slices of Node's shared 8 KiB
 * pool, which a long-lived slice would keep alive whole.)
 */
export const RENDER_MIN_CHARS = 16 * 1024;

/** The raw.php body: the content as UTF-8, encoded once per stored object when it is large. */
export function rawBody(deps: AppDeps, p: Paste): Buffer | string {
  const content = p.content;
  return content.length < RENDER_MIN_CHARS ? content : deps.store.render(p, 'raw', () => Buffer.from(content));
}
