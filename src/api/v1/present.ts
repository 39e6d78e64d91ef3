import { filesOf, recordOf } from '../../paste/files.ts';
import { badRequest, HttpError } from '../../http/errors.ts';
import type { Fields } from '../../http/fields.ts';
import { contentOf, formatTime, HASH_RE, shortcodeOf, type Paste } from '../../paste/paste.ts';
import type { Problem } from '../../paste/validate.ts';
import { ANONYMOUS_NAME, isAnonymous } from '../../paste/anonymous.ts';
import type { ApiDeps } from '../request.ts';
import { ownedUtf8Bytes } from '../../http/text-bytes.ts';
import { LARGE_CHARS } from './bodies.ts';

/** The `hash` parameter, refused with 400 unless it has the shape of a hash (README, API). */
export function requireHash(...sources: Fields[]): string {
  for (const fields of sources) {
    const v = Object.hasOwn(fields, 'hash') ? fields['hash'] : undefined;
    if (v === undefined) continue;
    if (typeof v === 'string' && HASH_RE.test(v)) return v;
    throw badRequest('hash must be 10 letters or digits');
  }
  throw badRequest('hash is required');
}

export const pasteUrl = (deps: ApiDeps, hash: string): string => `${deps.baseUrl}/p/${hash}`;
/** An anonymous paste's delete link (README, Anonymous pastes): its page asks before it deletes. */
export const deleteUrl = (deps: Pick<ApiDeps, 'baseUrl'>, hash: string, key: string): string =>
  `${deps.baseUrl}/p/${hash}/delete/${key}`;
export const shortUrl = (deps: Pick<ApiDeps, 'baseUrl'>, hash: string): string =>
  `${deps.baseUrl}/s/${shortcodeOf(hash)}`;

/** The paste object's fields but view_count and content, as they stand inside paste.php's answer. */
export const fieldsJson = (deps: Pick<ApiDeps, 'baseUrl' | 'accounts'>, p: Paste): string =>
  `,${JSON.stringify(presentFields(deps, p)).slice(1, -1)},"content":`;

/** The paste object of the README's Get a paste, but for view_count and content. Password and highlight stay inside. */
function presentFields(deps: Pick<ApiDeps, 'baseUrl' | 'accounts'>, p: Paste): Record<string, unknown> {
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
    revision: p.revision ?? 1,
    // Only on encrypted pastes: the answer for every other paste is as it always was.
    ...(p.encrypted === 1 ? { encrypted: 1 } : {}),
    owner: { id: p.owner_id, display_name: isAnonymous(p) ? ANONYMOUS_NAME : (owner?.name ?? 'unknown') },
    files: filesOf(p).map(recordOf),
  };
}

const BODY_HEAD = '{"ok":true,"paste":{"view_count":';

/**
 * The whole `paste.php` answer, in pieces, and its size in bytes: the view count, the other
 * fields rendered once per paste version (bodies.ts), and the content, which a paste
 * already holds as JSON. The size is summed from what the rendering measured once (all but
 * the view count are the same for every read of a version).
 */
export function pasteBody(
  deps: ApiDeps,
  p: Paste,
  viewCount: number,
): { pieces: [string, string | Buffer, string]; length: number } {
  const fields = deps.bodies.fields(p, fieldsJson, deps);
  const content =
    p.content_json.length < LARGE_CHARS
      ? p.content_json
      : deps.bodies.encoded(p, 'json', () => ownedUtf8Bytes(p.content_json));
  const head = BODY_HEAD + viewCount + fields.text;
  // The view count's digits are ASCII: one byte each, like BODY_HEAD's and the tail's.
  return {
    pieces: [head, content, BODY_TAIL],
    length: BODY_HEAD.length + String(viewCount).length + fields.bytes + fields.contentBytes + BODY_TAIL.length,
  };
}

const BODY_TAIL = '}}';

/** The raw.php body: the content as UTF-8 (bytes encoded once per version when it is large). */
export function rawBody(deps: ApiDeps, p: Paste): Buffer | string {
  if (p.content_json.length < LARGE_CHARS) return contentOf(p);
  return deps.bodies.encoded(p, 'utf8', () => ownedUtf8Bytes(contentOf(p)));
}

/** Turns validation problems into one refusal: 413 if any is about size, else 400. */
export function refuse(problems: Problem[]): HttpError {
  const big = problems.find((p) => p.tooLarge);
  if (big !== undefined) return new HttpError('payload_too_large', big.message);
  return new HttpError('bad_request', problems.map((p) => p.message).join('; '));
}
